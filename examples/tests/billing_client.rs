//! `fusion::client::Client` against the `fusion-billing` binary over stdio, grouped and flat:
//! envelopes read back, flags, decisions, warnings and batches, on a real transport.

use fusion::client::{AbortReason, CallError, Client, Decision, RetryPolicy};
use fusion::{ErrorCategory, ErrorCode};
use rmcp::model::ClientConfig;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

#[path = "support/within.rs"]
mod within;
use within::within;

#[path = "support/launch.rs"]
mod launch;
use launch::launch;

const BINARY: &str = env!("CARGO_BIN_EXE_fusion-billing");

/// Launches `fusion-billing ARGS` and wraps a client around its stdio.
async fn connect(args: &[&str]) -> (Client, RunningService<RoleClient, ClientConfig>) {
    let running = launch(BINARY, args, ClientConfig::default()).await;
    let client = within(Client::discover(running.peer().clone()))
        .await
        .expect("tools/list")
        .with_retry_policy(RetryPolicy::new().jitter(0.0));
    (client, running)
}

async fn check_contract(args: &[&str], list_invoices: &str) {
    let (client, running) = connect(args).await;

    // NOT_FOUND: parsed, typed, not retried; the available action is named as this server
    // names its tools, and calling it works.
    let err = within(client.call("billing.get_invoice", json!({"id": "inv_2026"})))
        .await
        .unwrap_err();
    let failure = err.tool_failure().expect("a tool failure");
    assert_eq!(failure.flags().code, ErrorCode::NotFound);
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::Category(ErrorCategory::NotFound))
    );
    let error = failure.tool_error().unwrap();
    assert_eq!(error.detail_value("requestedId"), Some("inv_2026"));
    assert_eq!(error.available_actions(), [list_invoices]);
    let raw = failure.result().content[0].as_text().unwrap().text.clone();
    assert_eq!(error.to_xml(), raw, "re-renders to the bytes received");
    let next = within(client.call(list_invoices, json!({})))
        .await
        .expect("the available action works");
    // The first page: `list_invoices` answers at most 200 bytes, two of the three invoices.
    assert_eq!(next.json::<Vec<Value>>().unwrap().len(), 2);

    // A custom code declared `validation` on the server: the flags in `_meta` say so.
    let over = json!({"invoice_id": "inv_0003", "amount_cents": 5000, "currency": "EUR"});
    let err = within(client.call("billing.charge", over))
        .await
        .unwrap_err();
    let failure = err.tool_failure().unwrap();
    assert_eq!(failure.flags().code.as_str(), "AMOUNT_OVER_BALANCE");
    assert_eq!(failure.flags().category, ErrorCategory::Validation);
    assert_eq!(
        failure.tool_error().unwrap().error_category(),
        ErrorCategory::Validation
    );

    // Every invalid field in one validation envelope.
    let bad = json!({"invoice_id": "invoice-1", "amount_cents": 0, "currency": "eur"});
    let err = within(client.call("billing.charge", bad))
        .await
        .unwrap_err();
    let validation = err
        .tool_failure()
        .unwrap()
        .validation()
        .expect("validation");
    let names: Vec<&str> = validation.problems().iter().map(|p| p.path()).collect();
    assert_eq!(names, ["amount_cents", "currency", "invoice_id"]);

    // A warning rides next to a success.
    let paid = json!({"invoice_id": "inv_0002", "amount_cents": 5000, "currency": "USD"});
    let output = within(client.call("billing.charge", paid)).await.unwrap();
    assert_eq!(output.warnings()[0].code().as_str(), "ALREADY_PAID");
    assert_eq!(
        output.json::<Value>().unwrap()["status"],
        "paid",
        "the payload is still there"
    );

    // A batch with an internal error in the middle keeps both siblings.
    let results = within(client.call_batch([
        ("ledger", json!({"id": "inv_0001"})),
        (
            "billing.refund",
            json!({"invoice_id": "inv_0003", "amount_cents": 1}),
        ),
        ("ledger", json!({"id": "inv_0003"})),
    ]))
    .await;
    assert_eq!(
        results[0].as_ref().unwrap().structured().unwrap()["balance_cents"],
        12000
    );
    match &results[1] {
        Err(CallError::Tool(failure)) => {
            assert_eq!(failure.flags().code, ErrorCode::InternalError);
            assert!(
                failure
                    .tool_error()
                    .unwrap()
                    .detail_value("errorId")
                    .is_some()
            );
            assert_eq!(failure.attempts(), 1, "unknown is never retried");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        results[2].as_ref().unwrap().structured().unwrap()["balance_cents"],
        990
    );

    running.cancel().await.expect("clean shutdown");
}

#[tokio::test]
async fn grouped_billing_over_stdio() {
    check_contract(&[], "billing.list_invoices").await;
}

#[tokio::test]
async fn flat_billing_over_stdio() {
    check_contract(&["--flat"], "billing_list_invoices").await;
}
