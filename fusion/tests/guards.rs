//! Runtime guards (SPEC section 4) through a real server and rmcp client, and through
//! `fusion::testing::Tester` on tokio's paused clock: concurrency limits under 10,000 calls,
//! rate limits and their `retry_after`, timeouts that drop the handler, cancellation, argument
//! limits, and guards applied after validation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use fusion::guard::{ConcurrencyLimit, GuardSpec, Guards, RateLimit};
use fusion::server::Server;
use fusion::testing::Tester;
use fusion::{ErrorCategory, RequestContext, ToolResponse};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientConfig, ClientRequest,
    Implementation,
};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Notify;

// --- tools ---------------------------------------------------------------------------------

/// What the tools saw: how many handlers ran, the most at once, side effects.
#[derive(Default)]
struct Probe {
    started: AtomicUsize,
    running: AtomicUsize,
    most: AtomicUsize,
    finished_late: AtomicBool,
    dropped: AtomicUsize,
    entered: Notify,
    release: Notify,
}

/// Counts a running handler; notes its drop.
struct Running<'a>(&'a Probe);

impl<'a> Running<'a> {
    fn enter(probe: &'a Probe) -> Running<'a> {
        probe.started.fetch_add(1, Ordering::SeqCst);
        let now = probe.running.fetch_add(1, Ordering::SeqCst) + 1;
        probe.most.fetch_max(now, Ordering::SeqCst);
        probe.entered.notify_waiters();
        Running(probe)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
        self.0.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Clone, Default)]
struct Jobs {
    probe: Arc<Probe>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Work {
    /// Milliseconds of work.
    millis: u64,
}

/// Background jobs.
#[fusion::tool(concurrency(max_active = 8, max_queued = 64))]
impl Jobs {
    /// Works for a while (as often as asked: the same work again has no further effect).
    #[action(idempotent)]
    async fn work(&self, args: Work) -> String {
        let _running = Running::enter(&self.probe);
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        "done".to_owned()
    }

    /// Works until released.
    #[action(concurrency(max_active = 1, max_queued = 1))]
    async fn hold(&self) -> String {
        let _running = Running::enter(&self.probe);
        self.probe.release.notified().await;
        "released".to_owned()
    }

    /// Sends a letter, three per minute per client.
    #[action(rate_limit(calls = 3, per = "1m"))]
    fn send(&self, args: Work) -> String {
        format!("sent after {}", args.millis)
    }

    /// Books a room after a slow check; stopped after two seconds.
    #[action(timeout = "2s")]
    async fn book(&self, args: Work) -> String {
        let _running = Running::enter(&self.probe);
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        // The side effect scheduled after the deadline.
        self.probe.finished_late.store(true, Ordering::SeqCst);
        "booked".to_owned()
    }
}

/// Waits until `n` handlers have started.
async fn started(probe: &Probe, n: usize) {
    within(async {
        while probe.started.load(Ordering::SeqCst) < n {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
}

// --- client harness --------------------------------------------------------------------------

type Client = RunningService<RoleClient, ClientConfig>;

async fn connect(server: Server, name: &str) -> Client {
    let mut info = ClientConfig::default();
    info.client_info = Implementation::new(name, "0.0.1");
    within(server.serve_in_process(info))
        .await
        .expect("client connects")
}

/// Fails the test instead of hanging.
async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(120), future)
        .await
        .expect("no answer within 120 s: a call hangs")
}

fn params(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(map) = arguments else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(map)
}

async fn call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    within(client.call_tool(params(name, arguments)))
        .await
        .expect("a tool result")
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

fn flags(result: &CallToolResult) -> Value {
    result.meta.as_ref().expect("flags")["fusion/error"].clone()
}

// --- concurrency ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_calls_against_8_active_and_64_queued_are_each_answered() {
    const TOTAL: usize = 10_000;
    let jobs = Jobs::default();
    let client = Arc::new(connect(Server::new("jobs", "1").tool(jobs.clone()), "load").await);
    let calls = (0..TOTAL).map(|_| {
        let client = Arc::clone(&client);
        tokio::spawn(async move {
            client
                .call_tool(params("jobs", json!({"action": "work", "millis": 2})))
                .await
        })
    });
    let calls: Vec<_> = calls.collect();
    let (mut ok, mut busy) = (0, 0);
    for call in calls {
        let result = within(call)
            .await
            .expect("no panic")
            .expect("a tool result");
        match text(&result) {
            "done" => ok += 1,
            busy_text if busy_text.starts_with("<tool_error code=\"SERVER_BUSY\"") => {
                let flags = flags(&result);
                assert!(flags["retryAfterSeconds"].as_u64().unwrap() >= 1, "{flags}");
                assert_eq!(flags["errorCategory"], "transient");
                busy += 1;
            }
            other => panic!("unexpected answer: {other}"),
        }
    }
    assert_eq!(ok + busy, TOTAL, "every call answered once");
    assert_eq!(
        ok,
        jobs.probe.started.load(Ordering::SeqCst),
        "a success per handler run"
    );
    assert!(ok >= 8, "at least the first wave ran: {ok}");
    assert!(busy > 0, "10,000 calls at once overflow 72 places");
    let most = jobs.probe.most.load(Ordering::SeqCst);
    assert!(most <= 8, "at most 8 handlers at once, saw {most}");
}

#[tokio::test]
async fn a_full_gate_refuses_with_capacity_and_queue_guidance_but_malformed_calls_never_queue() {
    let jobs = Jobs::default();
    let tester = Tester::new().tool(jobs.clone());
    // `hold`: 1 running, 1 waiting.
    let spawn = |tester: &Tester| {
        let tester = tester.clone();
        tokio::spawn(async move { tester.call("jobs.hold", json!({})).await })
    };
    let first = spawn(&tester);
    within(jobs.probe.entered.notified()).await;
    let queued = spawn(&tester);
    tokio::task::yield_now().await;

    // A malformed call is answered by validation, not by the full gate.
    tester
        .call("jobs.hold", json!({"extra": 1}))
        .await
        .assert_error("VALIDATION_ERROR");

    let refused = tester.call("jobs.hold", json!({})).await;
    refused
        .assert_error("SERVER_BUSY")
        .assert_category(ErrorCategory::Transient)
        .assert_retryable(true)
        .assert_recovery_contains("Send calls one at a time");
    let error = refused.response().tool_error().unwrap();
    assert_eq!(
        error.message(),
        "`jobs.hold` is at capacity: 1 call running and 1 call waiting, the most it takes."
    );
    assert!(error.retry_after_secs().unwrap() >= 1);

    jobs.probe.release.notify_one();
    within(first).await.unwrap().assert_text("released");
    // The queued call got the freed slot.
    started(&jobs.probe, 2).await;
    jobs.probe.release.notify_one();
    within(queued).await.unwrap().assert_text("released");
}

#[tokio::test]
async fn the_busy_retry_after_follows_observed_call_durations() {
    tokio::time::pause();
    let jobs = Jobs::default();
    let tester = Tester::new().tool(jobs.clone()).guard(
        "jobs.work",
        GuardSpec::new().concurrency(ConcurrencyLimit::new(1, 0)),
    );
    // Calls of 40 s each teach the gate how long a call takes.
    for _ in 0..30 {
        tester
            .call("jobs.work", json!({"millis": 40_000}))
            .await
            .assert_text("done");
    }
    let running = tokio::spawn({
        let tester = tester.clone();
        async move { tester.call("jobs.work", json!({"millis": 40_000})).await }
    });
    within(jobs.probe.entered.notified()).await;
    let refused = tester.call("jobs.work", json!({"millis": 1})).await;
    let secs = refused
        .assert_error("SERVER_BUSY")
        .response()
        .tool_error()
        .unwrap()
        .retry_after_secs()
        .unwrap();
    // One call ahead, about 40 s each (the average converges from its 1 s start).
    assert!((30..=40).contains(&secs), "retry_after {secs}");
    within(running).await.unwrap().assert_text("done");
}

// --- rate limits ---------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn the_call_over_the_rate_limit_waits_exactly_until_its_slot_frees() {
    let tester = Tester::new().tool(Jobs::default());
    let alice = || RequestContext::new().with_client("alice-secret-key");
    for n in 0..3 {
        tester
            .call_with("jobs.send", json!({"millis": n}), alice())
            .await
            .assert_success();
    }
    // 3 calls a minute: one slot frees every 20 seconds.
    let refused = tester
        .call_with("jobs.send", json!({"millis": 3}), alice())
        .await;
    refused
        .assert_error("RATE_LIMITED")
        .assert_category(ErrorCategory::RateLimit)
        .assert_retry_after(20)
        .assert_recovery("Wait 20 seconds before calling `jobs.send` again; do not retry sooner.");
    assert_eq!(
        refused.response().tool_error().unwrap().message(),
        "Too many calls to `jobs.send`: at most 3 calls every minute."
    );
    assert!(
        !refused.snapshot().contains("alice"),
        "the key is never echoed"
    );

    // Another client has its own bucket.
    tester
        .call_with(
            "jobs.send",
            json!({"millis": 0}),
            RequestContext::new().with_client("bob"),
        )
        .await
        .assert_success();

    // Malformed calls take no slot.
    tester
        .call_with("jobs.send", json!({"millis": "soon"}), alice())
        .await
        .assert_error("VALIDATION_ERROR");

    tokio::time::advance(Duration::from_millis(19_500)).await;
    tester
        .call_with("jobs.send", json!({"millis": 4}), alice())
        .await
        .assert_retry_after(1);
    tokio::time::advance(Duration::from_millis(500)).await;
    tester
        .call_with("jobs.send", json!({"millis": 5}), alice())
        .await
        .assert_text("sent after 5");
}

#[tokio::test(start_paused = true)]
async fn builder_options_override_the_attribute_and_keys_can_be_custom() {
    let tester = Tester::new().tool(Jobs::default()).guard(
        "jobs.send",
        GuardSpec::new().rate_limit(RateLimit::per_client(1, Duration::from_secs(10)).key_by(
            |request| {
                request.context.meta()["tenant"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            },
        )),
    );
    let tenant = |t: &str| {
        let meta = json!({ "tenant": t });
        RequestContext::new().with_meta(meta.as_object().unwrap().clone())
    };
    let send = |ctx| tester.call_with("jobs.send", json!({"millis": 1}), ctx);
    send(tenant("acme")).await.assert_success();
    send(tenant("acme"))
        .await
        .assert_error("RATE_LIMITED")
        .assert_retry_after(10);
    send(tenant("globex")).await.assert_success();
}

#[tokio::test]
async fn a_rate_limited_call_carries_its_flags_on_the_wire() {
    let server = Server::new("jobs", "1").tool(Jobs::default());
    let client = connect(server, "wire").await;
    for _ in 0..3 {
        call(&client, "jobs", json!({"action": "send", "millis": 1})).await;
    }
    let refused = call(&client, "jobs", json!({"action": "send", "millis": 1})).await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        text(&refused),
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n\
         <message>Too many calls to `jobs.send`: at most 3 calls every minute.</message>\n\
         <recovery>Wait 20 seconds before calling `jobs.send` again; do not retry sooner.</recovery>\n\
         <retry_after>20 seconds</retry_after>\n\
         </tool_error>"
    );
    let flags = flags(&refused);
    assert_eq!(flags["retryAfterSeconds"], 20);
    assert_eq!(flags["isRetryable"], true);
    assert_eq!(flags["errorCategory"], "rate_limit");
}

// --- timeouts and cancellation -------------------------------------------------------------

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

// --- argument limits and configuration -----------------------------------------------------

fn nested(levels: usize) -> Value {
    let mut value = json!(1);
    for _ in 1..levels {
        value = json!({ "inner": value });
    }
    value
}

#[tokio::test]
async fn argument_depth_and_size_limits_name_the_limit() {
    let server = Server::new("jobs", "1")
        .tool(Jobs::default())
        .max_argument_depth(Some(4))
        .max_argument_bytes(Some(200));
    let client = connect(server, "limits").await;
    let mut arguments = nested(6);
    arguments["action"] = json!("work");
    let deep = call(&client, "jobs", arguments).await;
    assert_eq!(
        text(&deep),
        "<tool_error code=\"VALIDATION_ERROR\" severity=\"error\">\n\
         <message>The arguments are nested 5 levels deep; the limit is 4 levels of objects and arrays.</message>\n\
         <recovery>Send arguments nested at most 4 levels deep: flatten the deepest values.</recovery>\n\
         </tool_error>"
    );
    let large = call(
        &client,
        "jobs",
        json!({"action": "work", "pad": "x".repeat(300)}),
    )
    .await;
    assert!(
        text(&large).contains("over 200 bytes of JSON"),
        "{}",
        text(&large)
    );

    // The tester applies the same limits from the same configuration.
    let guards = Guards::new().max_argument_depth(Some(4));
    let tester = Tester::new().tool(Jobs::default()).guards(guards);
    let mut arguments = nested(6);
    arguments["millis"] = json!(1);
    tester
        .call("jobs.work", arguments)
        .await
        .assert_error("VALIDATION_ERROR");
}

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
    let jobs = Jobs::default();
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

// --- the advertised contract and panics --------------------------------------------------------

#[tokio::test]
async fn guarded_actions_advertise_the_refusals_their_guards_send() {
    let client = connect(Server::new("jobs", "1").tool(Jobs::default()), "lister").await;
    let tools = within(client.list_all_tools()).await.expect("tools/list");
    let meta = tools[0].meta.as_ref().expect("the error contract");
    let mut listed: Vec<(String, String, String, bool)> = meta["fusion/errors"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["code"].as_str().unwrap().to_owned(),
                e["category"].as_str().unwrap().to_owned(),
                e["retryable"].as_bool().unwrap(),
            )
        })
        .collect();
    listed.sort();
    let expected = [
        ("book", "SERVER_BUSY", "transient"),
        ("book", "TIMEOUT", "transient"),
        ("hold", "SERVER_BUSY", "transient"),
        ("send", "RATE_LIMITED", "rate_limit"),
        ("send", "SERVER_BUSY", "transient"),
        ("work", "SERVER_BUSY", "transient"),
    ]
    // Every refusal is retryable but `book`'s timeout: `book` may have taken effect.
    .map(|(a, c, k)| {
        (
            a.to_owned(),
            c.to_owned(),
            k.to_owned(),
            (a, c) != ("book", "TIMEOUT"),
        )
    });
    assert_eq!(listed, expected);
    // The tool's own definition carries them, so the lockfile records them too.
    use fusion::Tool;
    let definition = Jobs::default().definition();
    let send = definition.action("send").unwrap();
    assert_eq!(
        send.errors
            .iter()
            .map(|e| e.code.as_str())
            .collect::<Vec<_>>(),
        ["RATE_LIMITED", "SERVER_BUSY"]
    );
    client.cancel().await.expect("clean shutdown");
}

/// A tool with one slot whose handler panics.
struct Fragile;

/// Fails loudly.
#[fusion::tool(concurrency(max_active = 1, max_queued = 0))]
impl Fragile {
    /// Panics.
    #[action]
    async fn explode(&self) -> String {
        tokio::task::yield_now().await;
        panic!("boom")
    }
}

#[tokio::test]
async fn a_panicking_handler_gives_its_slot_back() {
    let client = connect(Server::new("fragile", "1").tool(Fragile), "panicker").await;
    // One slot, no queue: a slot kept by a panicked call would turn the next into SERVER_BUSY.
    for _ in 0..3 {
        let result = call(&client, "fragile", json!({"action": "explode"})).await;
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            flags(&result)["code"],
            "INTERNAL_ERROR",
            "{}",
            text(&result)
        );
    }
    client.cancel().await.expect("clean shutdown");
}

#[tokio::test(start_paused = true)]
async fn refusals_name_the_action_as_a_flat_client_called_it() {
    let server = Server::new("jobs", "1")
        .tool(Jobs::default())
        .exposition(fusion::server::Exposition::Flat)
        .guard("jobs", GuardSpec::new().timeout(Duration::from_millis(250)));
    let client = connect(server, "flat").await;
    for _ in 0..3 {
        call(&client, "jobs_send", json!({"millis": 1})).await;
    }
    let limited = call(&client, "jobs_send", json!({"millis": 1})).await;
    assert_eq!(flags(&limited)["code"], "RATE_LIMITED");
    assert!(
        text(&limited).contains("Too many calls to `jobs_send`")
            && text(&limited).contains("before calling `jobs_send` again"),
        "{}",
        text(&limited)
    );
    let timed_out = call(&client, "jobs_work", json!({"millis": 1_000})).await;
    assert!(
        text(&timed_out).contains("`jobs_work` did not finish within 250 ms"),
        "{}",
        text(&timed_out)
    );
    client.cancel().await.expect("clean shutdown");
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
