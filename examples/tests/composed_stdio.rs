//! The `fusion-composed` binary (a fusion tool, an rmcp prompt and resources in one server,
//! `Server::handler`) launched as a child process and driven over stdio by rmcp's client: each
//! kind listed and fetched, the tool called with good and bad arguments, and the progress and
//! log notifications of a call received.

use std::sync::{Arc, Mutex};
use std::time::Duration;

// `LoggingMessageNotificationParam`: MCP logging is deprecated in rmcp, still served.
#[allow(deprecated)]
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientConfig, GetPromptRequestParams, Implementation,
    ProgressNotificationParam, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceError};
use serde_json::{Value, json};

#[path = "support/within.rs"]
mod within;
use within::within;

#[path = "support/launch.rs"]
mod launch;
use launch::launch;

const BINARY: &str = env!("CARGO_BIN_EXE_fusion-composed");

/// An rmcp client handler that records the notifications a server sends.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    #[allow(deprecated, reason = "MCP logging is deprecated in rmcp, still served")]
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.client_info = Implementation::new("composed-stdio-test", "0.0.1");
        config
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    #[allow(deprecated, reason = "MCP logging is deprecated in rmcp, still served")]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }
}

type Client = RunningService<RoleClient, Recorder>;

async fn call(client: &Client, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new("notes").with_arguments(arguments);
    within(client.call_tool(params))
        .await
        .expect("a tool result")
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

#[tokio::test]
async fn initialize_advertises_the_tools_and_the_handlers_capabilities() {
    let client = launch(BINARY, &[], Recorder::default()).await;
    let info = client.peer_info().expect("the initialize result");
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server.name, "fusion-composed");
    let capabilities = &info.capabilities;
    assert!(capabilities.tools.is_some(), "fusion's tools");
    assert!(capabilities.prompts.is_some(), "the handler's prompts");
    assert!(capabilities.resources.is_some(), "the handler's resources");
    assert_eq!(
        info.instructions.as_deref(),
        Some("Keep notes with the notes tool.\n\nEach note is also a resource, note://TITLE.")
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn each_kind_is_listed_and_fetched() {
    let client = launch(BINARY, &[], Recorder::default()).await;

    let tools = within(client.list_all_tools()).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["notes"]);

    let prompts = within(client.list_all_prompts()).await.unwrap();
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0].name, "summarize");
    let arguments = json!({"title": "welcome"}).as_object().unwrap().clone();
    let prompt = within(
        client.get_prompt(GetPromptRequestParams::new("summarize").with_arguments(arguments)),
    )
    .await
    .unwrap();
    let asked = &prompt.messages[0]
        .content
        .as_text()
        .expect("a text message")
        .text;
    assert!(asked.contains("fusion serves the tools"), "{asked}");

    let added = call(
        &client,
        json!({"action": "add", "title": "todo", "text": "ship it"}),
    )
    .await;
    assert_eq!(added.is_error, Some(false));
    assert_eq!(text(&added), "Saved as note://todo.");

    let resources = within(client.list_all_resources()).await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["note://todo", "note://welcome"]);
    let read = within(client.read_resource(ReadResourceRequestParams::new("note://todo")))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("a text resource: {read:?}")
    };
    assert_eq!(text, "ship it");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_arguments_get_fusions_validation_envelope() {
    let client = launch(BINARY, &[], Recorder::default()).await;
    let result = call(&client, json!({"action": "add", "title": ""})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "<validation_error action=\"notes.add\">
<field name=\"text\">Missing required field. You sent: (missing). Expected a string.</field>
<field name=\"title\">Too short. You sent: ''. Expected at least 1 character.</field>
<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"
    );
    let flags = &result.meta.as_ref().expect("_meta").0["fusion/error"];
    assert_eq!(flags["code"], "VALIDATION_ERROR");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_handlers_errors_reach_the_client_as_json_rpc_errors() {
    let client = launch(BINARY, &[], Recorder::default()).await;
    let missing = within(client.read_resource(ReadResourceRequestParams::new("note://nope"))).await;
    let Err(ServiceError::McpError(error)) = missing else {
        panic!("a JSON-RPC error: {missing:?}")
    };
    assert_eq!(error.message, "No resource note://nope.");
    client.cancel().await.unwrap();
}

#[tokio::test]
#[allow(deprecated, reason = "MCP logging is deprecated in rmcp, still served")]
async fn a_call_sends_progress_and_log_notifications() {
    let recorder = Recorder::default();
    let client = launch(BINARY, &[], recorder.clone()).await;
    call(
        &client,
        json!({"action": "add", "title": "b", "text": "two words"}),
    )
    .await;
    // rmcp's client puts a progress token in every request's `_meta`.
    let result = call(&client, json!({"action": "count_words"})).await;
    assert_eq!(text(&result), "11");
    // The client handles notifications on tasks of its own: wait for them to be recorded.
    within(async {
        while recorder.logs.lock().unwrap().is_empty()
            || recorder.progress.lock().unwrap().len() < 2
        {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let progress: Vec<(f64, Option<f64>)> = recorder
        .progress
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.progress, p.total))
        .collect();
    assert_eq!(progress, [(1.0, Some(2.0)), (2.0, Some(2.0))]);
    let logs = recorder.logs.lock().unwrap().clone();
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].level, rmcp::model::LoggingLevel::Info);
    assert_eq!(logs[0].data, json!({"notes": 2, "words": 11}));
    client.cancel().await.unwrap();
}
