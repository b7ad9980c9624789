//! Names: the tester routes grouped, flat and discriminator names like a server, refuses unknown
//! actions and tools, turns panics into internal errors and passes the request context on.

use std::sync::Arc;

use fusion::testing::Tester;
use fusion::{
    ErrorCategory, PreparedCall, RequestContext, Tool, ToolCall, ToolDefinition, ToolExt,
    ToolResponse,
};
use serde_json::{Map, Value, json};

use super::support::{panic_message, tester};

#[tokio::test]
async fn grouped_flat_and_discriminator_in_arguments_reach_the_same_action() {
    let t = tester();
    for outcome in [
        t.call("shop.list_items", json!({})).await,
        t.call("shop_list_items", json!({})).await,
        t.call("shop", json!({"action": "list_items"})).await,
    ] {
        outcome
            .assert_success()
            .assert_json_contains(json!({"total": 2}));
    }
}

#[tokio::test]
async fn a_custom_discriminator_is_injected_and_routed() {
    let t = tester();
    t.call("ledger.balance", json!({}))
        .await
        .assert_json_eq(1200);
    t.call("ledger_balance", json!({}))
        .await
        .assert_json_eq(1200);
    t.call("ledger", json!({"op": "balance"}))
        .await
        .assert_json_eq(1200);
    t.call("ledger", json!({"action": "balance"}))
        .await
        .assert_error("MISSING_DISCRIMINATOR");
}

#[tokio::test]
async fn single_function_tools_take_their_own_name() {
    tester()
        .call("ping", json!({"text": "pong"}))
        .await
        .assert_success();
    assert_eq!(
        tester()
            .call("ping", json!({"text": "pong"}))
            .await
            .response()
            .payload(),
        Some("pong")
    );
}

#[tokio::test]
async fn an_unknown_action_of_a_known_tool_is_the_models_error() {
    tester()
        .call("shop.list_item", json!({}))
        .await
        .assert_error("UNKNOWN_ACTION")
        .assert_category(ErrorCategory::Validation)
        .assert_recovery_contains("list_items");
}

#[test]
fn an_unknown_tool_panics_listing_the_names() {
    let message = panic_message(|| drop(tester().call("shop_buy", json!({}))));
    assert!(
        message.contains("no tool answers to `shop_buy`"),
        "{message}"
    );
    assert!(
        message.contains("shop, shop.list_items, shop_list_items, shop.order"),
        "{message}"
    );
    assert!(message.contains("ledger_balance, ping"), "{message}");
}

#[test]
#[should_panic(expected = "must be a JSON object")]
fn arguments_must_be_an_object() {
    drop(tester().call("ping", json!("pong")));
}

#[tokio::test]
async fn panics_become_internal_errors() {
    tester()
        .call("shop.explode", json!({}))
        .await
        .assert_error("INTERNAL_ERROR")
        .assert_category(ErrorCategory::Unknown)
        .assert_retryable(false);
}

#[tokio::test]
async fn the_request_context_reaches_the_action() {
    let t = tester();
    t.call("shop.whoami", json!({})).await.assert_success();
    let ctx = RequestContext::new()
        .with_client("acme")
        .with_cancellation(fusion::CancellationToken::new());
    let outcome = t.call_with("shop.whoami", json!({}), ctx).await;
    assert!(!outcome.is_cancelled());
    assert_eq!(outcome.response().payload(), Some("acme:false"));
}

#[tokio::test]
async fn flat_names_get_flat_available_actions() {
    let t = tester();
    let busy = json!({"sku": "busy", "quantity": 1});
    t.call("shop_order", busy.clone())
        .await
        .assert_error("RATE_LIMITED")
        .assert_actions(["shop_list_items", "shop_order"]);
    t.call("shop.order", busy.clone())
        .await
        .assert_actions(["shop.list_items", "shop.order"]);
    t.call(
        "shop",
        json!({"action": "order", "sku": "busy", "quantity": 1}),
    )
    .await
    .assert_actions(["shop.list_items", "shop.order"]);
    // The rendered envelope carries the flat names too.
    let flat = t.call("shop_order", busy).await.snapshot();
    assert!(
        flat.contains("  <action>shop_list_items</action>\n"),
        "{flat}"
    );
    assert!(!flat.contains("shop.order"), "{flat}");
}

#[tokio::test]
async fn flat_names_name_the_validation_envelope() {
    let t = tester();
    let flat = t.call("shop_order", json!({"sku": "abc"})).await;
    let error = flat
        .response()
        .validation_error()
        .expect("a validation error");
    assert_eq!(error.action(), "shop_order");
    let envelope = flat.snapshot();
    assert!(
        envelope.contains("<validation_error action=\"shop_order\">"),
        "{envelope}"
    );
    assert!(!envelope.contains("shop.order"), "{envelope}");
    // A custom discriminator too.
    let ledger = t.call("ledger_balance", json!({"extra": 1})).await;
    let error = ledger
        .response()
        .validation_error()
        .expect("a validation error");
    assert_eq!(error.action(), "ledger_balance");
    // Grouped names stay dotted.
    let grouped = t.call("shop.order", json!({"sku": "abc"})).await;
    let error = grouped
        .response()
        .validation_error()
        .expect("a validation error");
    assert_eq!(error.action(), "shop.order");
}

/// Written by hand with no action at all: its calls are its one action's.
struct Bare;

impl Tool for Bare {
    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "bare".into(),
            description: "Echoes its arguments.".into(),
            title: None,
            discriminator: None,
            actions: Vec::new(),
        }
    }

    fn prepare(self: Arc<Self>, call: ToolCall<'_>) -> Result<PreparedCall, ToolResponse> {
        assert_eq!(call.action(), "bare");
        let arguments: Map<String, Value> = call.parse()?;
        Ok(PreparedCall::sync(move |_| {
            Value::Object(arguments).to_string()
        }))
    }
}

#[tokio::test]
async fn a_hand_written_tool_without_actions_parses_any_object() {
    let tester = Tester::new().tool(Bare);
    tester
        .call("bare", json!({"x": 1}))
        .await
        .assert_text(r#"{"x":1}"#);
    let arguments = json!({"action": "echo"}).as_object().unwrap().clone();
    let direct = Bare.call(arguments, RequestContext::new()).await;
    assert_eq!(direct.payload(), Some(r#"{"action":"echo"}"#));
}
