//! The guarded tools the guard tests share (`Jobs`, its `Probe`, the `Work` arguments) and a
//! harness connecting a real rmcp client to a `fusion::server::Server` in process.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use fusion::server::Server;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Notify;

// --- tools ---------------------------------------------------------------------------------

/// What the tools saw: how many handlers ran, the most at once, side effects.
#[derive(Default)]
pub(crate) struct Probe {
    pub(crate) started: AtomicUsize,
    pub(crate) running: AtomicUsize,
    pub(crate) most: AtomicUsize,
    pub(crate) finished_late: AtomicBool,
    pub(crate) dropped: AtomicUsize,
    pub(crate) entered: Notify,
    pub(crate) release: Notify,
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
pub(crate) struct Jobs {
    pub(crate) probe: Arc<Probe>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Work {
    /// Milliseconds of work.
    pub(crate) millis: u64,
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

    /// Sends a letter, three per minute per caller.
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

// --- client harness --------------------------------------------------------------------------

type Client = RunningService<RoleClient, ClientConfig>;

pub(crate) async fn connect(server: Server, name: &str) -> Client {
    let mut info = ClientConfig::default();
    info.client_info = Implementation::new(name, "0.0.1");
    within(server.serve_in_process(info))
        .await
        .expect("client connects")
}

/// Fails the test instead of hanging.
pub(crate) async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(120), future)
        .await
        .expect("no answer within 120 s: a call hangs")
}

pub(crate) fn params(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(map) = arguments else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(map)
}

pub(crate) async fn call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    within(client.call_tool(params(name, arguments)))
        .await
        .expect("a tool result")
}

pub(crate) fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

pub(crate) fn flags(result: &CallToolResult) -> Value {
    result.meta.as_ref().expect("flags")["fusion/error"].clone()
}
