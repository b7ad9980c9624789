//! Assertions that pass when right: on errors, successes, warnings and validation errors.

use fusion::{ErrorCategory, Severity};
use serde_json::json;

use super::support::{invalid, not_found, rate_limited, tester, warned};

#[tokio::test]
async fn error_assertions_pass_on_the_contract() {
    not_found()
        .await
        .assert_error("NOT_FOUND")
        .assert_severity(Severity::Error)
        .assert_category(ErrorCategory::NotFound)
        .assert_retryable(false)
        .assert_recovery("List items first, then order a listed SKU.")
        .assert_recovery_contains("listed SKU")
        .assert_actions(["shop.list_items"])
        .assert_detail("sku", "zzz");
    rate_limited()
        .await
        .assert_error(fusion::ErrorCode::RateLimited)
        .assert_category(ErrorCategory::RateLimit)
        .assert_retryable(true)
        .assert_retry_after(30)
        .assert_actions(vec!["shop.list_items".to_owned(), "shop.order".to_owned()]);
}

#[tokio::test]
async fn success_and_warning_assertions_pass() {
    warned()
        .await
        .assert_success()
        .assert_json_eq(json!({"ordered": 2}))
        .assert_json_contains(json!({}))
        .assert_warning("DEPRECATED");
    tester()
        .call("shop.list_items", json!({}))
        .await
        .assert_json_contains(json!({"items": [{"sku": "abc"}, {"price": 5}]}));
}

#[tokio::test]
async fn validation_assertions_pass() {
    invalid()
        .await
        .assert_validation_fields(["sku", "quantity", "colour"])
        .assert_error("VALIDATION_ERROR")
        .assert_category(ErrorCategory::Validation)
        .assert_retryable(false);
}
