//! `fusion::testing`: the tester routes names like a server, and every assertion passes when
//! right and panics, saying what differed, when wrong.

use std::panic::{AssertUnwindSafe, catch_unwind};

use fusion::testing::{Outcome, Tester};
use fusion::{ErrorCategory, RequestContext, Severity, ToolError, ToolResponse};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// A shop.
pub struct Shop;

#[derive(Deserialize, JsonSchema, validator::Validate)]
#[serde(deny_unknown_fields)]
/// An order.
pub struct Order {
    /// The item.
    #[validate(length(min = 3))]
    pub sku: String,
    /// How many.
    #[validate(range(min = 1))]
    pub quantity: u32,
}

/// A shop.
#[fusion::tool]
impl Shop {
    /// Lists items.
    #[action(read_only)]
    pub fn list_items(&self) -> serde_json::Value {
        json!({"items": [{"sku": "abc", "price": 3}, {"sku": "def", "price": 5}], "total": 2})
    }

    /// Orders an item.
    #[action]
    pub fn order(&self, args: Order) -> Result<ToolResponse, ToolError> {
        match args.sku.as_str() {
            "abc" => Ok(ToolResponse::json(&json!({"ordered": args.quantity}))
                .with_warning(ToolError::deprecated("Use 'buy' instead."))),
            "busy" => Err(ToolError::rate_limited("Too many orders", 30)
                .suggest("Wait 30 seconds, then order again.")
                .actions(["shop.list_items", "shop.order"])
                .detail("sku", args.sku)),
            _ => Err(ToolError::not_found("No such item")
                .suggest("List items first, then order a listed SKU.")
                .actions(["shop.list_items"])
                .detail("sku", args.sku)),
        }
    }

    /// Always panics.
    #[action]
    pub fn explode(&self) -> u32 {
        panic!("the warehouse is on fire")
    }

    /// Says who called.
    #[action(read_only)]
    pub fn whoami(&self, ctx: RequestContext) -> String {
        format!("{}:{}", ctx.client().unwrap_or("-"), ctx.is_cancelled())
    }
}

/// A ledger.
pub struct Ledger;

/// A ledger with a custom discriminator.
#[fusion::tool(discriminator = "op")]
impl Ledger {
    /// The balance.
    #[action(read_only)]
    pub fn balance(&self) -> u64 {
        1200
    }
}

#[derive(Deserialize, JsonSchema)]
/// Ping arguments.
pub struct PingArgs {
    /// What to echo.
    pub text: String,
}

/// Echoes.
#[fusion::tool]
pub fn ping(args: PingArgs) -> String {
    args.text
}

fn tester() -> Tester {
    Tester::new().tool(Shop).tool(Ledger).tool(Ping)
}

async fn not_found() -> Outcome {
    tester()
        .call("shop.order", json!({"sku": "zzz", "quantity": 1}))
        .await
}

async fn rate_limited() -> Outcome {
    tester()
        .call("shop.order", json!({"sku": "busy", "quantity": 1}))
        .await
}

async fn warned() -> Outcome {
    tester()
        .call("shop.order", json!({"sku": "abc", "quantity": 2}))
        .await
}

async fn invalid() -> Outcome {
    tester()
        .call(
            "shop.order",
            json!({"sku": "a", "quantity": 0, "colour": "red"}),
        )
        .await
}

/// One assertion on an outcome.
type Check = Box<dyn FnOnce(&Outcome)>;

/// Runs `check`, which must panic, and returns its message.
#[track_caller]
fn panic_message(check: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(check)).expect_err("the assertion should panic");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => (*payload.downcast::<&str>().unwrap()).to_owned(),
    }
}

// --- names ----------------------------------------------------------------------------------

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
    let token = fusion::CancellationToken::new();
    token.cancel();
    let ctx = RequestContext::new()
        .with_client("acme")
        .with_cancellation(token);
    let outcome = t.call_with("shop.whoami", json!({}), ctx).await;
    assert_eq!(outcome.response().payload(), Some("acme:true"));
}

// --- assertions pass when right -------------------------------------------------------------

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

// --- assertions fail when wrong, saying what differed ---------------------------------------

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

// --- snapshots ------------------------------------------------------------------------------

#[tokio::test]
async fn snapshot_of_an_error_is_the_envelope_then_the_flags() {
    assert_eq!(
        rate_limited().await.snapshot(),
        r#"<tool_error code="RATE_LIMITED" severity="error">
<message>Too many orders</message>
<recovery>Wait 30 seconds, then order again.</recovery>
<available_actions>
  <action>shop.list_items</action>
  <action>shop.order</action>
</available_actions>
<details>
  <detail key="sku">busy</detail>
</details>
<retry_after>30 seconds</retry_after>
</tool_error>

flags: {
  "isError": true,
  "errorCategory": "rate_limit",
  "isRetryable": true,
  "retryAfterSeconds": 30,
  "code": "RATE_LIMITED",
  "severity": "error"
}"#
    );
}

#[tokio::test]
async fn snapshot_of_a_success_with_a_warning_has_every_block() {
    assert_eq!(
        warned().await.snapshot(),
        r#"{"ordered":2}

<tool_error code="DEPRECATED" severity="warning">
<message>Use 'buy' instead.</message>
</tool_error>

flags: {
  "isError": false,
  "errorCategory": "validation",
  "isRetryable": false,
  "code": "DEPRECATED",
  "severity": "warning"
}"#
    );
    let plain = tester().call("ledger.balance", json!({})).await;
    assert_eq!(plain.snapshot(), "1200\n\nflags: none");
}

#[tokio::test]
async fn snapshots_are_deterministic_for_internal_errors() {
    let first = tester().call("shop.explode", json!({})).await.snapshot();
    let second = tester().call("shop.explode", json!({})).await.snapshot();
    assert_eq!(first, second);
    assert!(
        first.contains("<detail key=\"errorId\">[error id]</detail>"),
        "{first}"
    );
}

#[tokio::test]
async fn arguments_over_the_servers_size_limit_are_refused_like_a_server_does() {
    let huge = "x".repeat(fusion::server::DEFAULT_MAX_ARGUMENT_BYTES + 1);
    let outcome = Tester::new()
        .tool(Shop)
        .call("shop.order", json!({"sku": huge, "quantity": 1}))
        .await;
    outcome.assert_error("VALIDATION_ERROR");
    assert!(
        outcome
            .snapshot()
            .contains("The arguments are over 4194304 bytes of JSON"),
        "{}",
        outcome.snapshot()
    );
}
