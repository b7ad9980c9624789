//! Snapshots: an error's envelope then its flags, every block of a success, deterministic
//! internal errors, and oversized arguments refused like a server does.

use fusion::testing::Tester;
use serde_json::json;

use super::support::{Shop, rate_limited, tester, warned};

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
