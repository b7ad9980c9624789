//! `fusion::client::connect`: the lifecycle follows the protocol version of the client's
//! configuration. Against rmcp servers over an in-process stream: one of MCP 2026-07-28 alone
//! (no `initialize`), which rmcp's own `serve` cannot reach, and one older than that revision
//! (no `server/discover`), reached through the handshake. And `Client::tools`: the tools as
//! listed, their schemas untouched.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use fusion::ToolResponse;
use fusion::client::{Client, connect};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, ClientNotification,
    ClientRequest, ErrorCode, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig, ServerResult, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, Service};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::json;

#[path = "support/within.rs"]
mod within;
use within::within;

/// A server with one tool, `echo`, speaking the versions up to `newest` (2026-07-28 alone, for
/// a server of that revision); served as a [`Wire`].
#[derive(Clone)]
struct Versioned {
    newest: ProtocolVersion,
    /// How many times `server/discover` was asked.
    discovered: Arc<AtomicU32>,
}

impl Versioned {
    fn new(newest: ProtocolVersion) -> Versioned {
        Versioned {
            newest,
            discovered: Arc::default(),
        }
    }

    fn discovered(&self) -> u32 {
        self.discovered.load(Ordering::SeqCst)
    }
}

impl ServerHandler for Versioned {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        if self.newest.has_initialize() {
            ProtocolVersion::known_up_to(&self.newest).into()
        } else {
            vec![self.newest.clone()].into()
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let serde_json::Value::Object(schema) = echo_schema() else {
            unreachable!("an object")
        };
        let echo = Tool::new("echo", "Echoes `text`", Arc::new(schema));
        Ok(ListToolsResult::with_all_items(vec![echo]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let text = arguments.get("text").and_then(|text| text.as_str());
        Ok(CallToolResult::from(ToolResponse::text(text.unwrap_or_default())).into())
    }
}

/// What a server of `Versioned` says to `server/discover` before rmcp's handler sees it: it
/// counts the request, and a server older than 2026-07-28 does not know the method.
struct Wire(Versioned);

impl Service<RoleServer> for Wire {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, ErrorData> {
        if matches!(request, ClientRequest::DiscoverRequest(_)) {
            self.0.discovered.fetch_add(1, Ordering::SeqCst);
            if self.0.newest.has_initialize() {
                let method_not_found = ErrorCode::METHOD_NOT_FOUND;
                return Err(ErrorData::new(method_not_found, "server/discover", None));
            }
        }
        Service::handle_request(&self.0, request, context).await
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Service::handle_notification(&self.0, notification, context).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.0)
    }
}

/// The input schema of `echo`: JSON Schema 2020-12 with a local and a network `$ref`.
fn echo_schema() -> serde_json::Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"line": {"$anchor": "line", "type": "string", "maxLength": 200}},
        "properties": {
            "text": {"$ref": "#/$defs/line"},
            "profile": {"$ref": "http://127.0.0.1:9/never-fetched.json"}
        },
        "allOf": [{"anyOf": [{"required": ["text"]}, {"required": ["profile"]}]}],
        "if": {"required": ["profile"]},
        "then": {"required": ["text"]},
        "else": {},
        "additionalProperties": false
    })
}

/// `server` on one end of an in-process stream; the other end, for a client.
fn serve(server: Versioned) -> tokio::io::DuplexStream {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = Wire(server).serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    client_end
}

/// The configuration rmcp defaults to, naming the newest protocol version it knows.
fn newest_config() -> ClientConfig {
    let config = ClientConfig::default();
    assert_eq!(config.protocol_version, ProtocolVersion::V_2026_07_28);
    config
}

/// `echo` called through `fusion::client::Client` over `peer`.
async fn echo(peer: rmcp::Peer<rmcp::RoleClient>) -> String {
    let client = within(Client::discover(peer)).await.expect("tools/list");
    let output = within(client.call("echo", json!({"text": "over the wire"})))
        .await
        .expect("echo answers");
    output.text().expect("a text").to_owned()
}

#[tokio::test]
async fn a_server_of_2026_07_28_alone_is_reached_through_discovery_where_rmcp_serve_fails() {
    let server = Versioned::new(ProtocolVersion::V_2026_07_28);

    // rmcp's `serve` opens with `initialize` whatever the version: refused (-32022).
    let refused = within(newest_config().serve(serve(server.clone()))).await;
    assert!(refused.is_err(), "a 2026-07-28 server has no handshake");

    let running = within(connect(newest_config(), serve(server.clone())))
        .await
        .expect("server/discover succeeds");
    let info = running.peer().peer_info().expect("the server's info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    assert_eq!(server.discovered(), 1);
    assert_eq!(echo(running.peer().clone()).await, "over the wire");
}

#[tokio::test]
async fn a_server_older_than_2026_07_28_gets_the_handshake_once_discovery_fails() {
    let server = Versioned::new(ProtocolVersion::V_2025_11_25);
    let running = within(connect(newest_config(), serve(server.clone())))
        .await
        .expect("initialize follows the failed server/discover");
    let info = running.peer().peer_info().expect("the server's info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    assert_eq!(server.discovered(), 1, "discovery was tried first");
    assert_eq!(echo(running.peer().clone()).await, "over the wire");
}

#[tokio::test]
async fn a_configuration_naming_a_version_with_a_handshake_goes_straight_to_it() {
    let server = Versioned::new(ProtocolVersion::V_2025_11_25);
    let config = ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_06_18);
    let running = within(connect(config, serve(server.clone())))
        .await
        .expect("initialize succeeds");
    let info = running.peer().peer_info().expect("the server's info");
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_06_18);
    assert_eq!(server.discovered(), 0, "no server/discover");
    assert_eq!(echo(running.peer().clone()).await, "over the wire");
}

#[tokio::test]
async fn the_listed_tools_keep_their_schemas_as_the_server_wrote_them() {
    let server = Versioned::new(ProtocolVersion::V_2026_07_28);
    let running = within(connect(newest_config(), serve(server)))
        .await
        .expect("server/discover succeeds");
    let client = within(Client::discover(running.peer().clone()))
        .await
        .expect("tools/list");
    let [echo] = client.tools() else {
        panic!("one tool listed: {:?}", client.tools());
    };
    assert_eq!(echo.name, "echo");
    let schema = serde_json::Value::Object((*echo.input_schema).clone());
    assert_eq!(
        schema,
        echo_schema(),
        "every keyword kept, no $ref resolved"
    );
    assert!(Client::new(running.peer().clone()).tools().is_empty());
}
