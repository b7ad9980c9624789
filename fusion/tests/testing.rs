//! `fusion::testing`: the tester routes names like a server, and every assertion passes when
//! right and panics, saying what differed, when wrong.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

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

/// Sets its flag when dropped.
struct DropGuard(Arc<AtomicBool>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A tool that never answers.
pub struct Sleeper {
    dropped: Arc<AtomicBool>,
}

/// Never answers.
#[fusion::tool]
impl Sleeper {
    /// Waits forever, ignoring cancellation: only dropping its future ends it.
    #[action]
    pub async fn wait(&self) -> String {
        let _guard = DropGuard(Arc::clone(&self.dropped));
        std::future::pending::<()>().await;
        unreachable!()
    }

    /// Answers at once.
    #[action(read_only)]
    pub fn now(&self) -> String {
        "now".to_owned()
    }
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

// --- cancellation ---------------------------------------------------------------------------

#[tokio::test]
async fn cancelling_while_the_action_runs_drops_its_future() {
    let dropped = Arc::new(AtomicBool::new(false));
    let t = Tester::new().tool(Sleeper {
        dropped: Arc::clone(&dropped),
    });
    let token = fusion::CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        canceller.cancel();
    });
    let ctx = RequestContext::new().with_cancellation(token);
    let outcome = tokio::time::timeout(
        Duration::from_secs(10),
        t.call_with("sleeper.wait", json!({}), ctx),
    )
    .await
    .expect("the cancelled call should end");
    outcome.assert_cancelled();
    assert!(outcome.is_cancelled());
    assert_eq!(outcome.snapshot(), "cancelled");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the action's future was not dropped"
    );
}

#[tokio::test]
async fn a_call_cancelled_before_it_runs_is_cancelled() {
    let t = Tester::new().tool(Sleeper {
        dropped: Arc::new(AtomicBool::new(false)),
    });
    let token = fusion::CancellationToken::new();
    token.cancel();
    let ctx = RequestContext::new().with_cancellation(token);
    t.call_with("sleeper_now", json!({}), ctx)
        .await
        .assert_cancelled();
}

#[tokio::test]
async fn assertions_on_a_cancelled_outcome_say_it_was_cancelled() {
    let t = Tester::new().tool(Sleeper {
        dropped: Arc::new(AtomicBool::new(false)),
    });
    let token = fusion::CancellationToken::new();
    token.cancel();
    let outcome = t
        .call_with(
            "sleeper.wait",
            json!({}),
            RequestContext::new().with_cancellation(token),
        )
        .await;
    let checks: Vec<Check> = vec![
        Box::new(|o| {
            let _ = o.assert_success();
        }),
        Box::new(|o| {
            let _ = o.assert_json_eq(1);
        }),
        Box::new(|o| {
            let _ = o.assert_json_contains(json!({}));
        }),
        Box::new(|o| {
            let _ = o.assert_error("NOT_FOUND");
        }),
        Box::new(|o| {
            let _ = o.assert_severity(Severity::Error);
        }),
        Box::new(|o| {
            let _ = o.assert_category(ErrorCategory::NotFound);
        }),
        Box::new(|o| {
            let _ = o.assert_retryable(false);
        }),
        Box::new(|o| {
            let _ = o.assert_retry_after(1);
        }),
        Box::new(|o| {
            let _ = o.assert_recovery("x");
        }),
        Box::new(|o| {
            let _ = o.assert_recovery_contains("x");
        }),
        Box::new(|o| {
            let _ = o.assert_actions(["x"]);
        }),
        Box::new(|o| {
            let _ = o.assert_detail("k", "v");
        }),
        Box::new(|o| {
            let _ = o.assert_validation_fields(["x"]);
        }),
        Box::new(|o| {
            let _ = o.assert_warning("DEPRECATED");
        }),
        Box::new(|o| {
            let _ = o.response();
        }),
        Box::new(|o| {
            let _ = o.clone().into_response();
        }),
    ];
    for check in checks {
        let message = panic_message(|| check(&outcome));
        assert!(message.contains("the call was cancelled"), "{message}");
    }
}

#[tokio::test]
async fn assert_cancelled_fails_on_an_answered_call() {
    let outcome = not_found().await;
    assert!(!outcome.is_cancelled());
    let message = panic_message(|| {
        outcome.assert_cancelled();
    });
    assert!(
        message.contains("expected a cancelled call, got the error NOT_FOUND"),
        "{message}"
    );
    assert!(message.contains("--- result ---"), "{message}");
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

/// Two tools whose flat names collide: `foo` with action `bar_baz` and `foo_bar` with `baz`.
pub struct Foo;

#[fusion::tool]
impl Foo {
    /// An action.
    #[action]
    pub fn bar_baz(&self) -> String {
        "foo".into()
    }
}

/// The second of the colliding tools.
pub struct FooBar;

#[fusion::tool]
impl FooBar {
    /// An action.
    #[action]
    pub fn baz(&self) -> String {
        "foo_bar".into()
    }
}

#[test]
#[should_panic(expected = "the name `foo_bar_baz` of tool `foo_bar` is already taken")]
fn a_flat_name_claimed_twice_is_refused_like_a_server_does() {
    let _ = Tester::new().tool(Foo).tool(FooBar);
}

#[test]
#[should_panic(expected = "the name `foo` of tool `foo` is already taken")]
fn a_tool_registered_twice_is_refused() {
    let _ = Tester::new().tool(Foo).tool(Foo);
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
