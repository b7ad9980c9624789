//! `fusion::client` over Streamable HTTP at MCP 2026-07-28 (rmcp's reqwest client, rmcp's
//! Streamable HTTP server on a loopback port): a call of a tool whose parameter is
//! `x-mcp-header` annotated (SEP-2243) goes through even from a client that never listed the
//! tools. rmcp's transport writes `Mcp-Param-*` headers only from listed schemas, so the server
//! refuses the first attempt (`-32020`, HTTP 400); `fusion::client` lists the tools and sends the
//! call again, with the header.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use fusion::ToolResponse;
use fusion::client::{Client, connect};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use serde_json::json;

#[path = "support/within.rs"]
mod within;
use within::within;

/// One tool, `locate`, whose `region` parameter travels in `Mcp-Param-Region` too.
#[derive(Clone, Default)]
struct Regional {
    /// The calls that reached the handler (past the server's header check).
    calls: Arc<AtomicU32>,
}

fn locate() -> Tool {
    let schema = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}
    }, "required": ["region"]});
    let serde_json::Value::Object(schema) = schema else {
        unreachable!("an object")
    };
    Tool::new("locate", "Where the region is", Arc::new(schema))
}

impl ServerHandler for Regional {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == "locate").then(locate)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![locate()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let arguments = request.arguments.unwrap_or_default();
        let region = arguments.get("region").and_then(|region| region.as_str());
        Ok(CallToolResult::from(ToolResponse::text(region.unwrap_or_default())).into())
    }
}

/// Serves `server` at `http://127.0.0.1:PORT/mcp`; returns the URL.
async fn serve(server: Regional) -> String {
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/mcp")
}

#[tokio::test]
async fn a_call_needing_a_param_header_goes_through_without_listing_first() {
    let server = Regional::default();
    let url = serve(server.clone()).await;
    let transport = StreamableHttpClientTransport::from_uri(url);
    let running = within(connect(ClientConfig::default(), transport))
        .await
        .expect("server/discover succeeds");

    let client = Client::new(running.peer().clone());
    let output = within(client.call("locate", json!({"region": "eu-west3"})))
        .await
        .expect("the call goes through with its header");
    assert_eq!(output.text(), Some("eu-west3"));
    assert_eq!(
        server.calls.load(Ordering::SeqCst),
        1,
        "the first attempt was refused before the handler"
    );
    // Once listed, the header goes with the first attempt.
    within(client.call("locate", json!({"region": "us-east1"})))
        .await
        .expect("answered");
    assert_eq!(server.calls.load(Ordering::SeqCst), 2);
    within(running.cancel()).await.unwrap();
}
