//! Assertions that fail when wrong, saying what differed and printing the result.

use std::panic::{AssertUnwindSafe, catch_unwind};

use fusion::testing::Tester;
use fusion::{ErrorCategory, Severity};
use serde_json::json;

use super::support::{Check, Foo, invalid, not_found, panic_message, rate_limited, tester, warned};

#[tokio::test]
async fn the_wrong_code_names_both_codes_and_prints_the_envelope() {
    let outcome = tester().call("shop.lst_items", json!({})).await;
    let message = panic_message(|| {
        outcome.assert_error("NOT_FOUND");
    });
    assert!(
        message.starts_with("expected code NOT_FOUND, got UNKNOWN_ACTION\n"),
        "{message}"
    );
    assert!(
        message.contains("<tool_error code=\"UNKNOWN_ACTION\" severity=\"error\">"),
        "{message}"
    );
    assert!(
        message.contains("\"errorCategory\": \"validation\""),
        "{message}"
    );
}

#[tokio::test]
async fn each_error_assertion_fails_when_wrong() {
    let e = not_found().await;
    let cases: Vec<(Check, &str)> = vec![
        (
            Box::new(|o| {
                o.assert_severity(Severity::Critical);
            }),
            "expected severity critical, got error",
        ),
        (
            Box::new(|o| {
                o.assert_category(ErrorCategory::Transient);
            }),
            "expected errorCategory transient, got not_found",
        ),
        (
            Box::new(|o| {
                o.assert_retryable(true);
            }),
            "expected isRetryable true, got false",
        ),
        (
            Box::new(|o| {
                o.assert_retry_after(5);
            }),
            "expected retryAfterSeconds 5, got (unset)",
        ),
        (
            Box::new(|o| {
                o.assert_recovery("List items first.");
            }),
            "expected recovery \"List items first.\", got \"List items first, then order a listed SKU.\"",
        ),
        (
            Box::new(|o| {
                o.assert_recovery_contains("retry");
            }),
            "expected a recovery containing \"retry\", got",
        ),
        (
            Box::new(|o| {
                o.assert_actions(["shop.order", "shop.list_items"]);
            }),
            "expected available actions [\"shop.order\", \"shop.list_items\"], got [\"shop.list_items\"]",
        ),
        (
            Box::new(|o| {
                o.assert_detail("sku", "abc");
            }),
            "expected detail \"sku\" = \"abc\", got \"zzz\"",
        ),
        (
            Box::new(|o| {
                o.assert_detail("id", "abc");
            }),
            "expected detail \"id\" = \"abc\", got (none)",
        ),
        (
            Box::new(|o| {
                o.assert_success();
            }),
            "expected a success, got the error NOT_FOUND (severity error)",
        ),
        (
            Box::new(|o| {
                o.assert_json_eq(1);
            }),
            "expected a JSON success, got the error NOT_FOUND (severity error)",
        ),
        (
            Box::new(|o| {
                o.assert_validation_fields(["sku"]);
            }),
            "expected a validation error, got",
        ),
        (
            Box::new(|o| {
                o.assert_warning("NOT_FOUND");
            }),
            "expected a warning NOT_FOUND, got warnings []",
        ),
    ];
    for (check, expected) in cases {
        let message = panic_message(|| check(&e));
        assert!(message.starts_with(expected), "{expected}\n---\n{message}");
        assert!(message.contains("--- result ---\n<tool_error"), "{message}");
    }
}

#[tokio::test]
async fn each_success_assertion_fails_when_wrong() {
    let w = warned().await;
    let cases: Vec<(Check, &str)> = vec![
        (
            Box::new(|o| {
                o.assert_json_eq(json!({"ordered": 3}));
            }),
            "expected the JSON payload {\"ordered\":3}, got {\"ordered\":2}",
        ),
        (
            Box::new(|o| {
                o.assert_json_contains(json!({"ordered": 3}));
            }),
            "expected the JSON payload to contain {\"ordered\":3}: $.ordered is 2, expected 3",
        ),
        (
            Box::new(|o| {
                o.assert_json_contains(json!({"id": 3}));
            }),
            "expected the JSON payload to contain {\"id\":3}: $.id is missing",
        ),
        (
            Box::new(|o| {
                o.assert_warning("ALREADY_PAID");
            }),
            "expected a warning ALREADY_PAID, got warnings [\"DEPRECATED\"]",
        ),
        (
            Box::new(|o| {
                o.assert_error("DEPRECATED");
            }),
            "expected an error, got a success",
        ),
        (
            Box::new(|o| {
                o.assert_recovery("x");
            }),
            "expected a tool error to check its recovery, got a success",
        ),
    ];
    for (check, expected) in cases {
        let message = panic_message(|| check(&w));
        assert!(message.starts_with(expected), "{expected}\n---\n{message}");
    }
    let list = tester().call("shop.list_items", json!({})).await;
    let message = panic_message(|| {
        list.assert_json_contains(json!({"items": [{}]}));
    });
    assert!(
        message.contains("$.items has 2 elements, expected 1"),
        "{message}"
    );
}

#[tokio::test]
async fn validation_fields_must_match_exactly() {
    let v = invalid().await;
    let message = panic_message(|| {
        v.assert_validation_fields(["sku", "quantity"]);
    });
    assert!(
        message.starts_with(
            "expected validation problems on fields [\"quantity\", \"sku\"], got [\"colour\", \"quantity\", \"sku\"]"
        ),
        "{message}"
    );
    assert!(
        message.contains("<validation_error action=\"shop.order\">"),
        "{message}"
    );
}

#[tokio::test]
#[should_panic(expected = "expected code NOT_FOUND, got RATE_LIMITED")]
async fn should_panic_works_too() {
    rate_limited().await.assert_error("NOT_FOUND");
}

#[tokio::test]
async fn text_payloads_are_asserted_as_text() {
    let outcome = Tester::new().tool(Foo).call("foo.bar_baz", json!({})).await;
    outcome.assert_success().assert_text("foo");
    let wrong = catch_unwind(AssertUnwindSafe(|| {
        outcome.assert_text("bar");
    }))
    .unwrap_err();
    let message = wrong.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains(r#"expected the text payload "bar", got "foo""#),
        "{message}"
    );
}
