//! A call refused for its headers (`-32020`, MCP 2026-07-28 over Streamable HTTP: rmcp's
//! transport writes the `Mcp-Param-*` headers from the schemas of the last `tools/list` it
//! carried) gets the tools listed again, every page and past rmcp's response cache, and goes
//! once more. Against a scripted rmcp server over an in-process stream that refuses every call
//! until the tools are listed (the refusals it is told to make).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use fusion::ToolResponse;
use fusion::client::{CallError, Client, connect};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, ErrorCode,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::{ErrorData, ServerHandler, ServiceError, ServiceExt};
use serde_json::json;

#[path = "support/within.rs"]
mod within;
use within::within;

/// Two pages of tools (`other`, then `region`, whose `region` parameter is `x-mcp-header`
/// annotated), fresh for an hour; refuses calls with `refusal` as many times as `refusals` says.
#[derive(Clone)]
struct Strict {
    refusals: Arc<AtomicU32>,
    refusal: ErrorCode,
    /// The pages listed (their cursors), in order.
    pages: Arc<Mutex<Vec<Option<String>>>>,
    calls: Arc<AtomicU32>,
}

impl Strict {
    fn new(refusals: u32, refusal: ErrorCode) -> Strict {
        Strict {
            refusals: Arc::new(AtomicU32::new(refusals)),
            refusal,
            pages: Arc::default(),
            calls: Arc::default(),
        }
    }

    fn pages(&self) -> Vec<Option<String>> {
        self.pages.lock().unwrap().clone()
    }

    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

fn tool(name: &str, schema: serde_json::Value) -> Tool {
    let serde_json::Value::Object(schema) = schema else {
        panic!("a schema is an object")
    };
    Tool::new(name.to_owned(), "A tool", Arc::new(schema))
}

impl ServerHandler for Strict {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.and_then(|request| request.cursor);
        self.pages.lock().unwrap().push(cursor.clone());
        let mut page = match cursor.as_deref() {
            None => {
                let other = tool("other", json!({"type": "object"}));
                let mut page = ListToolsResult::with_all_items(vec![other]);
                page.next_cursor = Some("2".to_owned());
                page
            }
            Some(_) => ListToolsResult::with_all_items(vec![tool(
                "region",
                json!({"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"}
                }}),
            )]),
        };
        page.ttl_ms = Some(3_600_000);
        Ok(page)
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let refuse = (self.refusals)
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if refuse {
            let message = "missing Mcp-Param-Region header for `region`";
            return Err(ErrorData::new(self.refusal, message, None));
        }
        Ok(CallToolResult::from(ToolResponse::text("us-west1")).into())
    }
}

/// A 2026-07-28 client of `server`.
async fn client_of(server: Strict) -> RunningService<RoleClient, ClientConfig> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    within(connect(ClientConfig::default(), client_end))
        .await
        .expect("server/discover succeeds")
}

fn code(err: &CallError) -> Option<ErrorCode> {
    match err {
        CallError::Protocol(ServiceError::McpError(error)) => Some(error.code),
        _ => None,
    }
}

#[tokio::test]
async fn a_call_refused_for_its_headers_lists_every_page_and_goes_once_more() {
    let server = Strict::new(1, ErrorCode::HEADER_MISMATCH);
    let running = client_of(server.clone()).await;
    let client = Client::new(running.peer().clone());
    let output = within(client.call("region", json!({"region": "us-west1"})))
        .await
        .expect("the second call goes through");
    assert_eq!(output.text(), Some("us-west1"));
    assert_eq!(server.pages(), [None, Some("2".to_owned())]);
    assert_eq!(server.calls(), 2);
}

#[tokio::test]
async fn the_tools_are_listed_again_past_rmcps_response_cache() {
    let server = Strict::new(0, ErrorCode::HEADER_MISMATCH);
    let running = client_of(server.clone()).await;
    let client = within(Client::discover(running.peer().clone()))
        .await
        .unwrap();
    // Fresh for an hour: rmcp's peer answers this one from its cache.
    within(running.peer().list_all_tools()).await.unwrap();
    assert_eq!(server.pages().len(), 2, "one listing of two pages");

    server.refusals.store(1, Ordering::SeqCst);
    let output = within(client.call("region", json!({"region": "us-west1"}))).await;
    assert_eq!(output.expect("answered").text(), Some("us-west1"));
    assert_eq!(server.pages().len(), 4, "listed again over the wire");
}

#[tokio::test]
async fn a_second_refusal_is_the_callers_and_nothing_loops() {
    let server = Strict::new(u32::MAX, ErrorCode::HEADER_MISMATCH);
    let running = client_of(server.clone()).await;
    let client = Client::new(running.peer().clone());
    let err = within(client.call("region", json!({"region": "us-west1"})))
        .await
        .expect_err("refused twice");
    assert_eq!(code(&err), Some(ErrorCode::HEADER_MISMATCH));
    assert_eq!(server.calls(), 2);
    assert_eq!(server.pages().len(), 2, "one listing");
}

#[tokio::test]
async fn other_refusals_are_not_sent_again() {
    let server = Strict::new(1, ErrorCode::INVALID_PARAMS);
    let running = client_of(server.clone()).await;
    let client = Client::new(running.peer().clone());
    let err = within(client.call("region", json!({"region": "us-west1"})))
        .await
        .expect_err("refused");
    assert_eq!(code(&err), Some(ErrorCode::INVALID_PARAMS));
    assert_eq!(server.calls(), 1);
    assert!(server.pages().is_empty(), "no listing");
}
