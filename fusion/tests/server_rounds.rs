//! A fusion server's rounds of `input_required` (MCP 2026-07-28, SEP-2322) seen by a real rmcp
//! client (`server/discover`, no `initialize`; its capabilities in every request's `_meta`):
//! questions asked together go out in one answer, each under its key, whatever their kind
//! (elicitation, sampling, roots); a sample the client did not declare refuses the call with
//! `-32021`; an answer that is not its question's result, `-32602`. And a 2025 client is sent
//! `roots/list` directly.
#![allow(
    deprecated,
    reason = "sampling and roots are deprecated from the 2026-07-28 revision on; the tests use them"
)]

use fusion::server::Server;
use fusion::{RequestContext, ToolError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, Implementation, InputResponses, ListRootsResult, ProtocolVersion,
    Root, SamplingMessage,
};
use rmcp::service::{
    ClientLifecycleMode, RequestContext as RmcpContext, RoleClient, RunningService,
    serve_client_with_lifecycle,
};
use rmcp::{ClientHandler, ErrorData, ServiceError};
use serde_json::{Value, json};

#[path = "support/within.rs"]
mod within;
use within::within;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

fn haiku() -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(vec![SamplingMessage::user_text("A haiku.")], 40)
}

/// Asks a name, a haiku and the roots together
#[fusion::tool]
async fn together(ctx: RequestContext) -> Result<String, ToolError> {
    let (name, haiku, roots) = tokio::join!(
        ctx.input("user_name").elicit::<Name>("Your name?"),
        ctx.sample(haiku()),
        ctx.list_roots(),
    );
    let haiku = haiku?;
    let text = haiku.message.content.first().and_then(|c| c.as_text());
    let text = text.map(|t| t.text.clone()).unwrap_or_default();
    Ok(format!("{}: {text} in {}", name?.name, roots?[0].uri))
}

/// Lists the client's roots
#[fusion::tool]
async fn roots(ctx: RequestContext) -> Result<String, ToolError> {
    let roots = ctx.list_roots().await?;
    Ok(roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join(","))
}

fn server() -> Server {
    Server::new("rounds", "1.0.0").tool(Together).tool(Roots)
}

/// A 2026-07-28 client of the server declaring `capabilities`.
async fn connect(capabilities: Value) -> RunningService<RoleClient, ClientConfig> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        if let Ok(running) = server().serve_io(read, write).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities: ClientCapabilities = serde_json::from_value(capabilities).unwrap();
    let config = ClientConfig::new(capabilities, Implementation::new("rounds", "1.0.0"));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    within(serve_client_with_lifecycle(config, client_end, lifecycle))
        .await
        .expect("server/discover succeeds")
}

fn call(tool: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned()).with_arguments(Default::default())
}

async fn send(
    client: &RunningService<RoleClient, ClientConfig>,
    params: CallToolRequestParams,
) -> Result<CallToolResponse, ServiceError> {
    within(client.peer().call_tool_once(params)).await
}

#[tokio::test]
async fn questions_asked_together_go_out_in_one_answer_and_their_answers_complete_the_call() {
    let client = connect(json!({"elicitation": {}, "sampling": {}, "roots": {}})).await;
    let Ok(CallToolResponse::InputRequired(input)) = send(&client, call("together")).await else {
        panic!("the questions")
    };
    let requests = serde_json::to_value(input.input_requests.unwrap()).unwrap();
    let methods: Vec<(&str, &str)> = (requests.as_object().unwrap().iter())
        .map(|(key, request)| (key.as_str(), request["method"].as_str().unwrap()))
        .collect();
    assert_eq!(
        methods,
        [
            ("q0", "sampling/createMessage"),
            ("q1", "roots/list"),
            ("user_name", "elicitation/create"),
        ]
    );
    assert_eq!(requests["q0"]["params"]["maxTokens"], 40);

    let answers: InputResponses = serde_json::from_value(json!({
        "user_name": {"action": "accept", "content": {"name": "Ada"}},
        "q0": {"role": "assistant", "content": {"type": "text", "text": "Autumn moon"},
               "model": "m"},
        "q1": {"roots": [{"uri": "file:///work"}]},
    }))
    .unwrap();
    let retry = call("together")
        .with_input_responses(answers)
        .with_request_state(input.request_state.unwrap());
    let Ok(CallToolResponse::Complete(result)) = send(&client, retry).await else {
        panic!("the result")
    };
    let text = result.content[0].as_text().unwrap().text.clone();
    assert_eq!(text, "Ada: Autumn moon in file:///work");
}

#[tokio::test]
async fn a_question_the_client_did_not_declare_refuses_the_call_with_32021() {
    let client = connect(json!({"elicitation": {}})).await;
    let Err(ServiceError::McpError(error)) = send(&client, call("together")).await else {
        panic!("a JSON-RPC error")
    };
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        error.data.unwrap()["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[tokio::test]
async fn an_answer_that_is_not_its_questions_result_is_refused_with_32602() {
    let client = connect(json!({"roots": {}})).await;
    let answers: InputResponses = serde_json::from_value(json!({"q0": 12345})).unwrap();
    let call = call("roots").with_input_responses(answers);
    let Err(ServiceError::McpError(error)) = send(&client, call).await else {
        panic!("a JSON-RPC error")
    };
    assert_eq!(error.code.0, -32602);
    assert!(error.message.contains("roots/list"), "{}", error.message);
}

/// A 2025 client with roots.
#[derive(Clone)]
struct WithRoots;

impl ClientHandler for WithRoots {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"roots": {}})).unwrap();
        ClientConfig::new(capabilities, Implementation::new("roots", "1.0.0"))
    }

    async fn list_roots(
        &self,
        _context: RmcpContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(vec![
            Root::new("file:///a"),
            Root::new("file:///b"),
        ]))
    }
}

#[tokio::test]
async fn a_2025_client_is_sent_roots_list_and_one_without_roots_gets_the_envelope() {
    let client = within(server().serve_in_process(WithRoots)).await.unwrap();
    let result = within(client.peer().call_tool(call("roots")))
        .await
        .unwrap();
    assert_eq!(
        result.content[0].as_text().unwrap().text,
        "file:///a,file:///b"
    );

    let client = within(server().serve_in_process(())).await.unwrap();
    let result = within(client.peer().call_tool(call("roots")))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = &result.content[0].as_text().unwrap().text;
    assert!(text.contains("ROOTS_UNAVAILABLE"), "{text}");
}

#[tokio::test]
async fn a_state_sent_with_a_misfit_answer_can_be_sent_again_with_a_fitting_one() {
    let client = connect(json!({"roots": {}})).await;
    let Ok(CallToolResponse::InputRequired(input)) = send(&client, call("roots")).await else {
        panic!("the question")
    };
    let state = input.request_state.unwrap();
    let retry = |answer: Value| {
        let answers: InputResponses = serde_json::from_value(json!({"q0": answer})).unwrap();
        call("roots")
            .with_input_responses(answers)
            .with_request_state(state.clone())
    };
    let Err(ServiceError::McpError(error)) = send(&client, retry(json!("file:///a"))).await else {
        panic!("a JSON-RPC error")
    };
    assert_eq!(error.code.0, -32602);
    // The state was not spent on the refused answer.
    let answer = json!({"roots": [{"uri": "file:///a"}]});
    let Ok(CallToolResponse::Complete(result)) = send(&client, retry(answer)).await else {
        panic!("the result")
    };
    assert_eq!(result.content[0].as_text().unwrap().text, "file:///a");
}
