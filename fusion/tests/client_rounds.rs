//! `fusion::client::Client`'s rounds of `input_required` (MCP 2026-07-28) against a scripted
//! rmcp server, which answers each `tools/call` with the next step of its script and keeps
//! every call it receives: a retry starts over and never replays a request state, a state
//! without questions goes back without asking anyone, and the rounds are bounded.
//! (The billing example's confirmation, end to end: `examples/tests/billing_client_mrtr.rs`.)

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion::client::{CallError, Client, RetryPolicy};
use fusion::{ToolError, ToolResponse};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    Implementation, InputRequests, InputRequiredResult, InputResponses, ProtocolVersion,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{
    ClientLifecycleMode, RequestContext, RoleClient, RoleServer, RunningService,
    serve_client_with_lifecycle,
};
use rmcp::{ErrorData, ServerHandler, ServiceError, ServiceExt};
use serde_json::{Value, json};

/// The `requestState` and the `inputResponses` of a call received.
type Received = (Option<String>, Option<Value>);

/// Answers each call with the next step; once the script is done, with `ok`.
#[derive(Clone, Default)]
struct Scripted {
    script: Arc<Mutex<VecDeque<CallToolResponse>>>,
    /// Every call received, in order.
    received: Arc<Mutex<Vec<Received>>>,
    /// Answers every call `input_required` when set.
    always_ask: bool,
}

impl Scripted {
    fn new(script: impl IntoIterator<Item = CallToolResponse>) -> Scripted {
        let scripted = Scripted::default();
        scripted.script.lock().unwrap().extend(script);
        scripted
    }

    fn states(&self) -> Vec<Option<String>> {
        let received = self.received.lock().unwrap();
        received.iter().map(|(state, _)| state.clone()).collect()
    }
}

impl ServerHandler for Scripted {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let responses = request
            .input_responses
            .map(|r| serde_json::to_value(r).unwrap());
        (self.received.lock().unwrap()).push((request.request_state, responses));
        if self.always_ask {
            return Ok(ask("again").into());
        }
        let next = self.script.lock().unwrap().pop_front();
        Ok(next.unwrap_or_else(|| CallToolResult::from(ToolResponse::text("ok")).into()))
    }
}

/// `input_required`: one question (`q0`) and the state `state`.
fn ask(state: &str) -> InputRequiredResult {
    let requests: InputRequests = serde_json::from_value(json!({"q0": {
        "method": "elicitation/create",
        "params": {
            "message": "Go ahead?",
            "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
        }
    }}))
    .unwrap();
    InputRequiredResult::new(Some(requests), Some(state.to_owned()))
}

fn failed(error: ToolError) -> CallToolResponse {
    CallToolResult::from(ToolResponse::error(error)).into()
}

/// A 2026-07-28 client (server/discover) of `server`, which can show forms.
async fn connect(server: Scripted) -> RunningService<RoleClient, ClientConfig> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
    let config = ClientConfig::new(capabilities, Implementation::new("rounds", "1.0.0"));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    within(serve_client_with_lifecycle(config, client_end, lifecycle))
        .await
        .expect("server/discover succeeds")
}

async fn within<F: std::future::IntoFuture>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .expect("answered within 20 s")
}

/// A client whose handler says yes to everything and counts the times it is asked.
fn answering(running: &RunningService<RoleClient, ClientConfig>) -> (Client, Arc<AtomicU32>) {
    let asked = Arc::new(AtomicU32::new(0));
    let count = Arc::clone(&asked);
    let client =
        Client::new(running.peer().clone()).with_input_handler(move |requests: InputRequests| {
            count.fetch_add(1, Ordering::SeqCst);
            let yes = json!({"action": "accept", "content": {"confirm": true}});
            let answers: InputResponses = requests.into_keys().map(|k| (k, yes.clone())).collect();
            std::future::ready(Some(answers))
        });
    (client, asked)
}

#[tokio::test]
async fn a_retry_starts_over_and_never_replays_a_request_state() {
    let server = Scripted::new([
        ask("s1").into(),
        failed(ToolError::timeout("The ledger took too long")),
        ask("s2").into(),
    ]);
    let running = connect(server.clone()).await;
    let (client, asked) = answering(&running);
    let client =
        client.with_retry_policy(RetryPolicy::new().jitter(0.0).base_delay(Duration::ZERO));

    let output = within(client.call("ledger", json!({}))).await.unwrap();
    assert_eq!(output.text(), Some("ok"));
    assert_eq!(output.attempts(), 2, "the timeout was retried");
    assert_eq!(asked.load(Ordering::SeqCst), 2, "asked again on the retry");
    let states = server.states();
    assert_eq!(
        states,
        [None, Some("s1".into()), None, Some("s2".into())],
        "each state sent once"
    );
    let received = server.received.lock().unwrap();
    assert_eq!(received[1].1.as_ref().unwrap()["q0"]["action"], "accept");
    assert_eq!(received[2].1, None, "the retry carries no answers");
}

#[tokio::test]
async fn resume_is_never_retried() {
    let server = Scripted::new([
        ask("s1").into(),
        failed(ToolError::timeout("The ledger took too long")),
    ]);
    let running = connect(server.clone()).await;
    let client = Client::new(running.peer().clone());
    let Err(CallError::InputRequired(input)) = within(client.call("ledger", json!({}))).await
    else {
        panic!("the question comes back")
    };
    let answers = InputResponses::from([("q0".to_owned(), json!({"action": "accept"}))]);
    let error = within(client.resume(*input, answers)).await.unwrap_err();
    let failure = error.tool_failure().unwrap();
    assert_eq!(failure.flags().code.as_str(), "TIMEOUT");
    assert_eq!(failure.attempts(), 1);
    assert!(
        failure.decision().wait().is_some(),
        "the policy would retry a call"
    );
    assert_eq!(server.states(), [None, Some("s1".into())]);
}

#[tokio::test]
async fn a_state_without_questions_goes_back_without_asking_anyone() {
    let server = Scripted::new([InputRequiredResult::from_request_state("later").into()]);
    let running = connect(server.clone()).await;
    let client = Client::new(running.peer().clone());
    let output = within(client.call("ledger", json!({}))).await.unwrap();
    assert_eq!(output.text(), Some("ok"));
    assert_eq!(server.states(), [None, Some("later".into())]);
}

#[tokio::test]
async fn a_handler_that_gives_no_answer_ends_the_call_with_the_question() {
    let server = Scripted::new([ask("s1").into()]);
    let running = connect(server.clone()).await;
    let client =
        Client::new(running.peer().clone()).with_input_handler(|_| std::future::ready(None));
    let error = within(client.call("ledger", json!({}))).await.unwrap_err();
    let CallError::InputRequired(input) = error else {
        panic!("the question, got {error:?}")
    };
    assert_eq!(input.request_state(), Some("s1"));
    assert_eq!(input.to_string(), "tool `ledger` needs input: q0");
    assert_eq!(server.states(), [None]);
}

#[tokio::test]
async fn a_server_that_keeps_asking_is_stopped_after_ten_rounds() {
    let server = Scripted {
        always_ask: true,
        ..Scripted::default()
    };
    let running = connect(server.clone()).await;
    let (client, asked) = answering(&running);
    let error = within(client.call("ledger", json!({}))).await.unwrap_err();
    assert!(
        matches!(
            error,
            CallError::Protocol(ServiceError::InputRequiredRoundsExceeded { max_rounds: 10 })
        ),
        "{error:?}"
    );
    assert_eq!(server.states().len(), 11, "the first call and ten rounds");
    assert_eq!(asked.load(Ordering::SeqCst), 10);
}
