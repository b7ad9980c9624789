//! Guard configuration: targets naming no tool or action, zero timeouts, limits too large to
//! count and flat names are startup errors; tools called directly run unguarded.

use std::time::Duration;

use fusion::guard::{ConcurrencyLimit, GuardSpec};
use fusion::server::Server;
use fusion::testing::Tester;
use fusion::{RequestContext, ToolResponse};
use serde_json::json;

use super::support::Jobs;

#[test]
#[should_panic(expected = "guard target `jobs.wrok` names no action of tool `jobs`")]
fn a_guard_for_an_unknown_action_is_a_startup_error() {
    let _ = Server::new("jobs", "1").tool(Jobs::default()).guard(
        "jobs.wrok",
        GuardSpec::new().timeout(Duration::from_secs(1)),
    );
}

#[test]
#[should_panic(expected = "guard target `billing` names no registered tool")]
fn a_guard_for_an_unknown_tool_is_a_startup_error() {
    let _ = Tester::new()
        .tool(Jobs::default())
        .guard("billing", GuardSpec::new().timeout(Duration::from_secs(1)));
}

#[tokio::test]
async fn tools_called_directly_run_unguarded() {
    use fusion::{Tool, ToolExt};
    let jobs = std::sync::Arc::new(Jobs::default());
    // No server, no guards in the context: the rate limit does not apply.
    for _ in 0..5 {
        let response: ToolResponse = jobs
            .call(
                json!({"action": "send", "millis": 1})
                    .as_object()
                    .unwrap()
                    .clone(),
                RequestContext::new(),
            )
            .await;
        assert_eq!(response.payload(), Some("sent after 1"));
    }
    let declared = jobs.guards();
    assert!(declared.tool.concurrency.is_some());
    let names: Vec<_> = declared.actions.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["hold", "send", "book"]);
}

#[test]
#[should_panic(expected = "the timeout of `jobs.book` is zero")]
fn a_zero_timeout_is_a_startup_error() {
    let _ = Server::new("jobs", "1")
        .tool(Jobs::default())
        .guard("jobs.book", GuardSpec::new().timeout(Duration::ZERO));
}

#[test]
#[should_panic(expected = "the concurrency limit of `jobs` allows")]
fn a_concurrency_limit_too_large_to_count_is_a_startup_error() {
    let _ = Tester::new().tool(Jobs::default()).guard(
        "jobs",
        GuardSpec::new().concurrency(ConcurrencyLimit::new(usize::MAX, 0)),
    );
}

#[test]
#[should_panic(
    expected = "guard target `jobs_send` is a flat tool name; guards name the action `jobs.send`"
)]
fn a_flat_guard_target_points_at_the_action_name() {
    let _ = Server::new("jobs", "1")
        .tool(Jobs::default())
        .exposition(fusion::server::Exposition::Flat)
        .guard(
            "jobs_send",
            GuardSpec::new().timeout(Duration::from_secs(1)),
        );
}
