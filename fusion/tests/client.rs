//! `fusion::client::Client` end to end: a fusion server on one end of an in-process duplex
//! stream, rmcp's real client on the other, the retry policy under Tokio's paused clock. One
//! test binary: the scripted tool and the harness are here, the tests grouped by topic in
//! `client/`.

#[path = "client/retries.rs"]
mod retries;

#[path = "client/results.rs"]
mod results;

#[path = "client/other_servers.rs"]
mod other_servers;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion::client::{CallError, Client, Decision, RetryPolicy};
use fusion::server::{Exposition, Server};
use fusion::{ToolError, ToolResponse};
use rmcp::model::ClientConfig;
use schemars::JsonSchema;
use serde::Deserialize;

// --- a tool whose failures are scripted -------------------------------------------------------

/// Answers each `fetch` with the next scripted error, and succeeds once the script is empty.
#[derive(Clone, Default)]
pub(crate) struct Flaky {
    script: Arc<Mutex<VecDeque<ToolError>>>,
    calls: Arc<AtomicU32>,
}

impl Flaky {
    fn failing(errors: impl IntoIterator<Item = ToolError>) -> Flaky {
        let flaky = Flaky::default();
        flaky.script.lock().unwrap().extend(errors);
        flaky
    }

    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Lookup {
    /// The ID, at least three characters.
    #[schemars(length(min = 3))]
    id: String,
}

/// A flaky upstream.
#[fusion::tool]
impl Flaky {
    /// Fails as scripted, then answers `"ok <n>"` with the call count.
    #[action(read_only)]
    fn fetch(&self) -> Result<String, ToolError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        match self.script.lock().unwrap().pop_front() {
            Some(error) => Err(error),
            None => Ok(format!("ok {n}")),
        }
    }

    /// Answers `id` with a deprecation warning riding next to it.
    #[action(read_only)]
    fn lookup(&self, args: Lookup) -> ToolResponse {
        ToolResponse::text(format!("found {}", args.id)).with_warning(
            ToolError::deprecated("'lookup' is deprecated; use 'fetch'.")
                .suggest("Call flaky.fetch next time."),
        )
    }

    /// Answers with a warning alone (a warning-severity error: `isError: false`).
    #[action(read_only)]
    fn advise(&self) -> Result<String, ToolError> {
        Err(ToolError::new("PARTIAL", "Only the first page was returned.").warning())
    }
}

// --- harness ----------------------------------------------------------------------------------

/// The decisions the policy's hook saw: (attempt, code, decision, waited before).
pub(crate) type Log = Arc<Mutex<Vec<(u32, String, Decision, Duration)>>>;

pub(crate) async fn connect(
    server: Server,
) -> rmcp::service::RunningService<rmcp::RoleClient, ClientConfig> {
    server
        .serve_in_process(ClientConfig::default())
        .await
        .expect("client connects")
}

/// A client of a server serving `flaky`, with `policy` logging every decision into the log.
pub(crate) async fn client_for(
    flaky: &Flaky,
    exposition: Exposition,
    policy: RetryPolicy,
) -> (
    Client,
    Log,
    rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>,
) {
    let server = Server::new("flaky-server", "1.0.0")
        .tool(flaky.clone())
        .exposition(exposition);
    let running = connect(server).await;
    let log = Log::default();
    let sink = Arc::clone(&log);
    let policy = policy.on_decision(move |event| {
        sink.lock().unwrap().push((
            event.attempt,
            event.flags.code.to_string(),
            event.decision.clone(),
            event.waited,
        ));
    });
    let client = Client::discover(running.peer().clone())
        .await
        .expect("tools/list")
        .with_retry_policy(policy);
    (client, log, running)
}

pub(crate) fn exact_policy() -> RetryPolicy {
    RetryPolicy::new()
        .jitter(0.0)
        .base_delay(Duration::from_millis(100))
        .max_delay(Duration::from_millis(300))
        .max_attempts(6)
}

pub(crate) fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

pub(crate) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub(crate) fn failed(
    result: Result<fusion::client::CallOutput, CallError>,
) -> Box<fusion::client::ToolFailure> {
    match result {
        Err(CallError::Tool(failure)) => failure,
        other => panic!("expected a tool failure, got {other:?}"),
    }
}
