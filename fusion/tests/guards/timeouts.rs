//! Timeouts and cancellation: a timeout drops the handler, a server timeout replaces the
//! attribute, cancelled calls free their places, and a TIMEOUT's retryability on the wire agrees
//! with the advertised contract.

use std::sync::atomic::Ordering;
use std::time::Duration;

use fusion::ErrorCategory;
use fusion::guard::GuardSpec;
use fusion::server::Server;
use fusion::testing::Tester;
use rmcp::model::{CallToolRequest, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::json;

use super::support::{Jobs, Work, call, connect, flags, params, text, within};

#[tokio::test(start_paused = true)]
async fn a_timeout_drops_the_handler_so_its_late_side_effect_never_happens() {
    let jobs = Jobs::default();
    let tester = Tester::new().tool(jobs.clone());
    let outcome = tester.call("jobs.book", json!({"millis": 5_000})).await;
    // `book` is neither read-only nor idempotent: it may have booked before it was stopped,
    // so the model is told to check first, and client code is told not to retry.
    outcome
        .assert_error("TIMEOUT")
        .assert_category(ErrorCategory::Transient)
        .assert_retryable(false);
    let error = outcome.response().tool_error().unwrap();
    assert_eq!(
        error.message(),
        "`jobs.book` did not finish within 2 seconds and was stopped."
    );
    assert_eq!(
        error.recovery(),
        Some(
            "It was stopped part-way and may already have taken effect. Check whether it did \
             (read the state it changes) before calling it again; do not retry it blindly."
        )
    );
    assert_eq!(jobs.probe.dropped.load(Ordering::SeqCst), 1, "dropped");
    // Long past the handler's own deadline: nothing wakes it, nothing is booked.
    tokio::time::advance(Duration::from_secs(60)).await;
    tokio::task::yield_now().await;
    assert!(!jobs.probe.finished_late.load(Ordering::SeqCst));

    // Within the deadline it finishes.
    tester
        .call("jobs.book", json!({"millis": 1_000}))
        .await
        .assert_text("booked");
    assert!(jobs.probe.finished_late.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn a_server_timeout_replaces_the_attribute_and_reports_milliseconds() {
    let jobs = Jobs::default();
    let tester = Tester::new()
        .tool(jobs.clone())
        .guard("jobs", GuardSpec::new().timeout(Duration::from_millis(250)));
    // The tool-wide timeout covers `work`; `book` keeps its own 2 s.
    // `work` is idempotent: the same call again is safe, so the timeout is retryable.
    let work = tester.call("jobs.work", json!({"millis": 1_000})).await;
    work.assert_error("TIMEOUT")
        .assert_category(ErrorCategory::Transient)
        .assert_retryable(true);
    assert_eq!(
        work.response().tool_error().unwrap().recovery(),
        Some(
            "Retry once. If it times out again, ask for less in one call (a narrower filter, a \
             smaller page) or try again later."
        )
    );
    tester
        .call("jobs.book", json!({"millis": 1_000}))
        .await
        .assert_text("booked");
    let error = tester.call("jobs.work", json!({"millis": 300})).await;
    assert_eq!(
        error.response().tool_error().unwrap().message(),
        "`jobs.work` did not finish within 250 ms and was stopped.",
        "the tool's timeout stopped the handler of one action: the message names it"
    );
}

#[tokio::test]
async fn cancelling_running_and_queued_calls_frees_their_places() {
    let jobs = Jobs::default();
    let client = connect(Server::new("jobs", "1").tool(jobs.clone()), "canceller").await;
    let hold = || {
        ClientRequest::CallToolRequest(CallToolRequest::new(params(
            "jobs",
            json!({"action": "hold"}),
        )))
    };
    let send = || async {
        within(
            client
                .peer()
                .send_cancellable_request(hold(), PeerRequestOptions::no_options()),
        )
        .await
        .unwrap()
    };
    let running = send().await;
    within(jobs.probe.entered.notified()).await;
    let queued = send().await;
    // The gate is full: a third call is refused.
    let refused = call(&client, "jobs", json!({"action": "hold"})).await;
    assert!(text(&refused).starts_with("<tool_error code=\"SERVER_BUSY\""));

    within(queued.cancel(Some("no longer needed".into())))
        .await
        .unwrap();
    within(running.cancel(Some("no longer needed".into())))
        .await
        .unwrap();
    within(async {
        while jobs.probe.dropped.load(Ordering::SeqCst) < 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert_eq!(
        jobs.probe.started.load(Ordering::SeqCst),
        1,
        "the queued call never ran"
    );

    // Both places are free again: one call runs, one waits.
    let again = send().await;
    within(async {
        while jobs.probe.started.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let waiting = tokio::spawn({
        let peer = client.peer().clone();
        async move { peer.send_request(hold()).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    jobs.probe.release.notify_one();
    within(again.await_response()).await.unwrap();
    within(async {
        while jobs.probe.started.load(Ordering::SeqCst) < 3 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    jobs.probe.release.notify_one();
    within(waiting).await.unwrap().unwrap();
}

// --- a TIMEOUT's retryability: the wire agrees with the contract --------------------------------

/// An upstream service.
#[derive(Clone, Default)]
struct Upstream;

/// The upstream service's own refusals: its timeouts are `TIMEOUT` too (retryable, the
/// default of the transient category).
#[derive(Debug, fusion::ToolErrors)]
#[tool_error(tool = Upstream)]
enum UpstreamError {
    #[tool_error(TIMEOUT, recovery = "Try again in a minute.")]
    Slow,
}

impl std::fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("The upstream service did not answer in time")
    }
}

/// Talks to an upstream service; every call is stopped after a second.
#[fusion::tool(timeout = "1s")]
impl Upstream {
    /// Pushes a change upstream (`millis: 0`: the upstream service times out).
    #[action]
    async fn push(&self, args: Work) -> Result<String, UpstreamError> {
        if args.millis == 0 {
            return Err(UpstreamError::Slow);
        }
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        Ok("pushed".to_owned())
    }

    /// Reads the upstream state.
    #[action(read_only, idempotent = false)]
    async fn peek(&self, args: Work) -> Result<String, UpstreamError> {
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        Ok("state".to_owned())
    }

    /// Wipes the upstream state, saying so explicitly.
    #[action(read_only = false, idempotent = false, destructive)]
    async fn wipe(&self, args: Work) -> String {
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        "wiped".to_owned()
    }

    /// Deletes an entry: destructive, but deleting it again has no further effect.
    #[action(destructive, idempotent)]
    async fn delete(&self, args: Work) -> String {
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        "deleted".to_owned()
    }
}

/// Pings a host; stopped after a second.
#[fusion::tool(timeout = "1s")]
#[action(read_only)]
async fn ping(args: Work) -> String {
    tokio::time::sleep(Duration::from_millis(args.millis)).await;
    "up".to_owned()
}

/// Pokes a host; stopped after a second.
#[fusion::tool(timeout = "1s")]
async fn poke(args: Work) -> String {
    tokio::time::sleep(Duration::from_millis(args.millis)).await;
    "poked".to_owned()
}

/// `(severity, category, retryable)` of every error advertised for `action` by `tool`.
fn advertised(tool: &rmcp::model::Tool, action: &str) -> Vec<(String, String, bool)> {
    tool.meta.as_ref().expect("the error contract")["fusion/errors"]
        .as_array()
        .expect("a list")
        .iter()
        .filter(|e| e["action"] == action && e["code"] == "TIMEOUT")
        .map(|e| {
            (
                e["severity"].as_str().unwrap().to_owned(),
                e["category"].as_str().unwrap().to_owned(),
                e["retryable"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn every_timeout_sent_is_advertised_with_its_flags_in_both_expositions() {
    use fusion::server::Exposition;
    // (grouped tool, action, flat tool name, milliseconds of work, retryable)
    let cases = [
        // The upstream service's own TIMEOUT, then the guard's.
        ("upstream", "push", "upstream_push", 0, true),
        ("upstream", "push", "upstream_push", 5_000, false),
        ("upstream", "peek", "upstream_peek", 5_000, true),
        ("upstream", "wipe", "upstream_wipe", 5_000, false),
        ("upstream", "delete", "upstream_delete", 5_000, true),
        ("ping", "ping", "ping", 5_000, true),
        ("poke", "poke", "poke", 5_000, false),
    ];
    for exposition in [Exposition::Grouped, Exposition::Flat] {
        let server = Server::new("timeouts", "1")
            .tool(Upstream)
            .tool(Ping)
            .tool(Poke)
            .exposition(exposition);
        let client = connect(server, "timeouts").await;
        let tools = within(client.list_all_tools()).await.expect("tools/list");
        for (tool, action, flat, millis, retryable) in cases {
            let name = match exposition {
                Exposition::Flat => flat,
                _ => tool,
            };
            let mut arguments = json!({ "millis": millis });
            if tool != action && exposition != Exposition::Flat {
                arguments["action"] = json!(action);
            }
            let result = call(&client, name, arguments).await;
            let sent = flags(&result);
            assert_eq!(
                sent["code"],
                "TIMEOUT",
                "{name} {action}: {}",
                text(&result)
            );
            assert_eq!(
                sent["isRetryable"],
                retryable,
                "{exposition:?} {name} {action}: {}",
                text(&result)
            );
            let listed = tools
                .iter()
                .find(|t| t.name == name)
                .unwrap_or_else(|| panic!("{name} is listed"));
            let sent = (
                sent["severity"].as_str().unwrap().to_owned(),
                sent["errorCategory"].as_str().unwrap().to_owned(),
                retryable,
            );
            let advertised = advertised(listed, action);
            assert!(
                advertised.contains(&sent),
                "{exposition:?} {name} {action}: sent {sent:?}, advertised {advertised:?}"
            );
        }
        client.cancel().await.expect("clean shutdown");
    }
}
