//! What each return and error type becomes, and panics.

use fusion::{
    ErrorCategory, ErrorCode, Json, RequestContext, ToolError, ToolErrors, ToolExt, ToolResponse,
};
use serde::Serialize;
use serde_json::json;

use super::dispatch::Billing;
use super::{call, envelope, object, payload};

// --- return and error kinds -------------------------------------------------------------------

pub(super) struct Kinds;

#[derive(Serialize)]
struct Summary {
    total: u32,
    currency: &'static str,
}

#[derive(Debug)]
struct LedgerDown;
impl std::fmt::Display for LedgerDown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ledger at 10.0.0.7:5432 refused the connection")
    }
}
impl std::error::Error for LedgerDown {}

/// A plain error type opts in by converting into `ToolError` (here, as an internal error whose
/// cause is logged and never shown) and declaring no contract.
impl From<LedgerDown> for ToolError {
    fn from(error: LedgerDown) -> ToolError {
        ToolError::from_internal(&error)
    }
}
impl ToolErrors for LedgerDown {}

#[fusion::tool]
impl Kinds {
    #[action]
    fn text(&self) -> String {
        "a < b & \"c\"".to_owned()
    }

    #[action]
    fn static_text(&self) -> &'static str {
        "static"
    }

    #[action]
    fn nothing(&self) {}

    #[action]
    fn nothing_fallible(&self) -> Result<(), ToolError> {
        Ok(())
    }

    #[action]
    fn summary(&self) -> Json<Summary> {
        Json(Summary {
            total: 3,
            currency: "EUR",
        })
    }

    #[action]
    fn own_response(&self) -> ToolResponse {
        ToolResponse::text("partial").with_warning(ToolError::new(
            "TRUNCATED",
            "Only the first 100 rows are shown.",
        ))
    }

    #[action]
    fn tool_error(&self) -> Result<String, ToolError> {
        Err(ToolError::conflict("Invoice already paid")
            .suggest("Refund it instead")
            .retry_after(30))
    }

    #[action]
    fn anyhow(&self) -> anyhow::Result<String> {
        Err(anyhow::anyhow!(
            "connect postgres://admin:hunter2@db/ledger: refused"
        ))
    }

    #[action]
    fn std_error(&self) -> Result<u32, LedgerDown> {
        Err(LedgerDown)
    }

    #[action]
    fn boxed(&self) -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
        Err(Box::new(ToolError::not_found("No such ledger")))
    }

    #[action]
    async fn panics(&self) -> String {
        panic!("invariant broken: secret-token-123")
    }

    #[action]
    fn panics_at_once(&self) -> String {
        panic!("invariant broken: secret-token-123")
    }
}

#[tokio::test]
async fn success_values_render_by_kind() {
    assert_eq!(
        payload(&call(Kinds, json!({"action": "text"})).await),
        "a < b & \"c\""
    );
    assert_eq!(
        payload(&call(Kinds, json!({"action": "static_text"})).await),
        "static"
    );
    assert_eq!(
        payload(&call(Kinds, json!({"action": "nothing"})).await),
        "OK"
    );
    assert_eq!(
        payload(&call(Kinds, json!({"action": "nothing_fallible"})).await),
        "OK"
    );
    assert_eq!(
        payload(&call(Kinds, json!({"action": "summary"})).await),
        r#"{"total":3,"currency":"EUR"}"#
    );
}

#[tokio::test]
async fn an_own_tool_response_passes_through_with_its_warning() {
    let response = call(Kinds, json!({"action": "own_response"})).await;
    assert!(!response.is_error());
    assert_eq!(
        response.content_texts(),
        [
            "partial",
            "<tool_error code=\"TRUNCATED\" severity=\"warning\">
<message>Only the first 100 rows are shown.</message>
</tool_error>"
        ]
    );
}

#[tokio::test]
async fn a_tool_error_passes_through_intact() {
    let response = call(Kinds, json!({"action": "tool_error"})).await;
    assert_eq!(
        envelope(&response),
        "<tool_error code=\"CONFLICT\" severity=\"error\">
<message>Invoice already paid</message>
<recovery>Refund it instead</recovery>
<retry_after>30 seconds</retry_after>
</tool_error>"
    );
    let missing = call(
        Billing::default(),
        json!({"action": "get_invoice", "id": "inv_9"}),
    )
    .await;
    assert_eq!(
        envelope(&missing),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">
<message>No invoice with that ID</message>
<recovery>List invoices first, then retry with a real ID</recovery>
<available_actions>
  <action>billing.list_invoices</action>
</available_actions>
<details>
  <detail key=\"requestedId\">inv_9</detail>
</details>
</tool_error>"
    );
}

/// `INTERNAL_ERROR`, the fixed text, an error id, and nothing of `secret`.
fn assert_internal(response: &ToolResponse, secret: &str) {
    let error = response.tool_error().expect("a tool error");
    assert_eq!(*error.code(), ErrorCode::InternalError);
    assert_eq!(error.message(), fusion::internal::MESSAGE);
    assert!(
        error
            .detail_value("errorId")
            .is_some_and(|id| id.starts_with("err_"))
    );
    assert!(!error.to_xml().contains(secret), "{}", error.to_xml());
    assert_eq!(error.error_category(), ErrorCategory::Unknown);
    assert!(!error.is_retryable());
}

#[tokio::test]
async fn errors_without_a_contract_become_internal_errors_without_leaking() {
    assert_internal(&call(Kinds, json!({"action": "anyhow"})).await, "hunter2");
    assert_internal(
        &call(Kinds, json!({"action": "std_error"})).await,
        "10.0.0.7",
    );
}

#[tokio::test]
async fn a_boxed_tool_error_keeps_its_contract() {
    let response = call(Kinds, json!({"action": "boxed"})).await;
    assert_eq!(*response.tool_error().unwrap().code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn a_panicking_action_is_an_internal_error_and_the_tool_keeps_serving() {
    let response = call(Kinds, json!({"action": "panics"})).await;
    assert_internal(&response, "secret-token-123");
    assert_eq!(
        payload(&call(Kinds, json!({"action": "text"})).await),
        "a < b & \"c\""
    );
    let again = call(Kinds, json!({"action": "panics"})).await;
    assert_internal(&again, "secret-token-123");
}

/// A synchronous action runs at the first poll of the call's future (no guards, nothing to
/// wait for): a panic there must come back as the response, not unwind out of `poll`.
#[test]
fn a_synchronous_action_that_panics_is_an_internal_error_at_the_first_poll() {
    let mut future = std::panic::catch_unwind(|| {
        Box::pin(Kinds.call(
            object(json!({"action": "panics_at_once"})),
            RequestContext::new(),
        ))
    })
    .expect("nothing runs before the first poll");
    let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| poll_once(&mut future)))
        .expect("polling a call never panics");
    let std::task::Poll::Ready(response) = polled else {
        panic!("a synchronous action is answered at the first poll");
    };
    assert_internal(&response, "secret-token-123");
}

/// A call's future does nothing until it is polled: the action's effect is seen only after.
#[test]
fn nothing_runs_before_the_first_poll() {
    let billing = std::sync::Arc::new(Billing::default());
    let count = || payload(&block_on(call(&billing, json!({"action": "count"})))).to_owned();
    let mut future = Box::pin(billing.call(
        object(json!({"action": "create_invoice", "customer": "acme", "amount": 5})),
        RequestContext::new(),
    ));
    assert_eq!(count(), "0");
    let std::task::Poll::Ready(created) = poll_once(&mut future) else {
        panic!("a synchronous action is answered at the first poll");
    };
    assert_eq!(payload(&created), "inv_acme_5");
    assert_eq!(count(), "1");
}

/// What ends at the first poll and what may wait: a synchronous, unguarded action and every
/// routing or validation error are answered then; an `async` action's future is polled in
/// turn.
#[test]
fn synchronous_calls_are_answered_at_the_first_poll() {
    let call = |arguments: serde_json::Value| Kinds.call(object(arguments), RequestContext::new());
    for arguments in [
        json!({"action": "text"}),
        json!({"action": "nope"}),
        json!({}),
        json!({"action": "text", "extra": 1}),
    ] {
        let mut future = Box::pin(call(arguments.clone()));
        assert!(poll_once(&mut future).is_ready(), "{arguments}");
    }
    assert_internal(
        &block_on(call(json!({"action": "panics"}))),
        "secret-token-123",
    );
    assert_eq!(
        payload(&block_on(call(json!({"action": "text"})))),
        "a < b & \"c\""
    );
}

/// Polls a call once.
fn poll_once<F: std::future::Future<Output = ToolResponse>>(
    future: &mut std::pin::Pin<Box<F>>,
) -> std::task::Poll<ToolResponse> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    future.as_mut().poll(&mut cx)
}

/// Polls a future that never waits to completion.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}
