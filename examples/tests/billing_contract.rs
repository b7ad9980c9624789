//! The billing example's error contract, every `BillingError` variant and a validation error,
//! asserted in-process with `fusion::testing` (no transport).

#[path = "../billing.rs"]
#[allow(
    dead_code,
    reason = "only the tools are used here, not the command line"
)]
mod billing;

use billing::{Billing, Ledger};
use fusion::auth::Principal;
use fusion::testing::Tester;
use fusion::{ErrorCategory, RequestContext, Severity};
use serde_json::json;

fn tester() -> Tester {
    let billing = Billing::seeded();
    let ledger = Ledger::sharing(&billing);
    Tester::new().tool(billing).tool(ledger)
}

/// A caller `subject` granted the `charge` and `refund` scopes, as a bearer token or the local
/// user grants them.
fn payer(subject: &str) -> RequestContext {
    RequestContext::new().with_principal(Principal::new(subject).with_scopes(["charge", "refund"]))
}

#[tokio::test]
async fn not_found_names_the_id_and_the_action_to_call_instead() {
    tester()
        .call("billing.get_invoice", json!({"id": "inv_2026"}))
        .await
        .assert_error("NOT_FOUND")
        .assert_severity(Severity::Error)
        .assert_category(ErrorCategory::NotFound)
        .assert_retryable(false)
        .assert_recovery("List invoices first, then retry with a real ID")
        .assert_actions(["billing.list_invoices"])
        .assert_detail("requestedId", "inv_2026");
}

#[tokio::test]
async fn charging_a_paid_invoice_answers_it_with_a_warning() {
    tester()
        .call_with(
            "billing.charge",
            json!({"invoice_id": "inv_0002", "amount_cents": 5000, "currency": "USD"}),
            payer("alice"),
        )
        .await
        .assert_success()
        .assert_json_contains(json!({"id": "inv_0002", "status": "paid"}))
        .assert_warning("ALREADY_PAID");
}

#[tokio::test]
async fn an_amount_over_the_balance_names_the_right_amount() {
    tester()
        .call_with(
            "billing.charge",
            json!({"invoice_id": "inv_0003", "amount_cents": 5000, "currency": "EUR"}),
            payer("alice"),
        )
        .await
        .assert_error("AMOUNT_OVER_BALANCE")
        .assert_category(ErrorCategory::Validation)
        .assert_recovery_contains("990 cents")
        .assert_detail("balanceCents", 990);
}

#[tokio::test]
async fn a_currency_mismatch_names_the_invoice_currency() {
    tester()
        .call_with(
            "billing.charge",
            json!({"invoice_id": "inv_0001", "amount_cents": 100, "currency": "USD"}),
            payer("alice"),
        )
        .await
        .assert_error("CONFLICT")
        .assert_recovery_contains("EUR");
}

#[tokio::test]
async fn a_refund_over_what_was_paid_names_the_paid_amount() {
    tester()
        .call_with(
            "billing.refund",
            json!({"invoice_id": "inv_0002", "amount_cents": 9999}),
            payer("alice"),
        )
        .await
        .assert_error("AMOUNT_OVER_PAID")
        .assert_detail("paidCents", 5000);
}

#[tokio::test]
async fn a_ledger_failure_is_internal_and_leaks_nothing() {
    let outcome = tester()
        .call_with(
            "billing.refund",
            json!({"invoice_id": "inv_0003", "amount_cents": 1}),
            payer("alice"),
        )
        .await;
    outcome
        .assert_error("INTERNAL_ERROR")
        .assert_category(ErrorCategory::Unknown)
        .assert_retryable(false);
    let snapshot = outcome.snapshot();
    assert!(snapshot.contains("[error id]"), "{snapshot}");
    assert!(!snapshot.contains("hunter2"), "{snapshot}");
}

#[tokio::test]
async fn invalid_arguments_name_every_field() {
    tester()
        .call(
            "billing.charge",
            json!({"invoice_id": "invoice-7", "amount_cents": 0, "currency": "eur"}),
        )
        .await
        .assert_error("VALIDATION_ERROR")
        .assert_validation_fields(["amount_cents", "currency", "invoice_id"]);
}

#[tokio::test]
async fn the_output_schema_action_answers_structured_content() {
    let outcome = tester().call("ledger", json!({"id": "inv_0003"})).await;
    outcome.assert_json_eq(json!({"id": "inv_0003", "currency": "EUR", "balance_cents": 990}));
    assert_eq!(
        outcome.response().structured_content(),
        Some(&json!({"id": "inv_0003", "currency": "EUR", "balance_cents": 990}))
    );
}

/// The whole answer a model gets for a missing invoice, kept as an `insta` snapshot
/// (`tests/snapshots/`): any change to the envelope or its flags shows up as a diff to review
/// (`cargo insta review`, or `INSTA_UPDATE=always cargo test`).
#[tokio::test]
async fn not_found_snapshot() {
    let outcome = tester()
        .call("billing.get_invoice", json!({"id": "inv_2026"}))
        .await;
    insta::assert_snapshot!(outcome.snapshot());
}

/// Structured content is part of the snapshot: a change to the output shows up in the diff.
#[tokio::test]
async fn output_schema_snapshot_includes_structured_content() {
    let outcome = tester().call("ledger", json!({"id": "inv_0003"})).await;
    let snapshot = outcome.snapshot();
    assert!(
        snapshot.contains("structuredContent: {\n  \"balance_cents\": 990"),
        "{snapshot}"
    );
}

#[tokio::test]
async fn charge_without_the_scope_is_forbidden_naming_only_the_scope() {
    let reader = RequestContext::new().with_principal(Principal::new("alice-7"));
    let outcome = tester()
        .call_with(
            "billing.charge",
            json!({"invoice_id": "inv_0001", "amount_cents": 100, "currency": "EUR"}),
            reader,
        )
        .await;
    outcome
        .assert_error("FORBIDDEN")
        .assert_category(ErrorCategory::Auth)
        .assert_retryable(false)
        .assert_detail("missingScopes", "charge");
    assert!(!outcome.snapshot().contains("alice-7"));
    // Reading needs no scope.
    tester()
        .call_with(
            "billing.get_invoice",
            json!({"id": "inv_0001"}),
            RequestContext::new().with_principal(Principal::new("alice-7")),
        )
        .await
        .assert_success();
}

#[tokio::test]
async fn charge_without_a_caller_is_unauthorized() {
    tester()
        .call(
            "billing.charge",
            json!({"invoice_id": "inv_0001", "amount_cents": 100, "currency": "EUR"}),
        )
        .await
        .assert_error("UNAUTHORIZED")
        .assert_category(ErrorCategory::Auth)
        .assert_retryable(false)
        .assert_detail("requiredScopes", "charge");
}

/// The whole answer to a caller lacking the scope, as a snapshot.
#[tokio::test]
async fn forbidden_snapshot() {
    let outcome = tester()
        .call_with(
            "billing.charge",
            json!({"invoice_id": "inv_0001", "amount_cents": 100, "currency": "EUR"}),
            RequestContext::new().with_principal(Principal::new("alice")),
        )
        .await;
    insta::assert_snapshot!(outcome.snapshot());
}

#[tokio::test(start_paused = true)]
async fn charge_takes_five_calls_a_minute_per_caller() {
    let tester = tester();
    let client = || payer("alice-7");
    let charge = json!({"invoice_id": "inv_0001", "amount_cents": 1, "currency": "EUR"});
    for _ in 0..5 {
        tester
            .call_with("billing.charge", charge.clone(), client())
            .await
            .assert_success();
    }
    // One slot frees every 12 seconds.
    let refused = tester
        .call_with("billing.charge", charge.clone(), client())
        .await;
    refused
        .assert_error("RATE_LIMITED")
        .assert_category(ErrorCategory::RateLimit)
        .assert_retryable(true)
        .assert_retry_after(12);
    assert!(!refused.snapshot().contains("alice-7"));
    // Other actions and other callers are not limited by it.
    tester
        .call_with("billing.get_invoice", json!({"id": "inv_0001"}), client())
        .await
        .assert_success();
    tester
        .call_with("billing.charge", charge.clone(), payer("bob"))
        .await
        .assert_success();
    tokio::time::advance(std::time::Duration::from_secs(12)).await;
    tester
        .call_with("billing.charge", charge, client())
        .await
        .assert_success();
}
