//! The MCP 2026-07-28 lifecycle over Streamable HTTP (SEP-2575), called as the tower service
//! axum would mount: the methods the revision removed are not found (HTTP 404, `-32601`, the
//! request's id), log messages follow the request's `io.modelcontextprotocol/logLevel`, and
//! `subscriptions/listen` streams carry the list changes told to `Server::list_changes`, as
//! 2025 sessions get them on their standalone stream.
#![cfg(feature = "http")]

#[path = "support/within.rs"]
mod within;

#[path = "server_stateless/edges.rs"]
mod edges;

use std::time::Duration;

use fusion::server::{HttpService, ListChanges, Server, StreamableHttpServerConfig};
use fusion::{LogLevel, RequestContext};
use http_body_util::BodyExt;
use rmcp::model::{
    ListPromptsResult, PaginatedRequestParams, Prompt, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext as RmcpContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use tower_service::Service;
use within::within;

/// Logs one message at each of four levels, then answers.
#[fusion::tool]
async fn chatty(ctx: RequestContext) -> &'static str {
    for level in [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
    ] {
        ctx.log(level, level.as_str());
    }
    "done"
}

/// A handler with one prompt, whose list may change, and logging.
struct Prompts;

impl ServerHandler for Prompts {
    #[allow(deprecated, reason = "MCP logging (2025 revisions)")]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_logging()
            .build();
        ServerConfig::new(capabilities)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RmcpContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompt = Prompt::new("greet", Some("Greets"), None);
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    #[allow(deprecated, reason = "MCP logging (2025 revisions)")]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RmcpContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }
}

fn server() -> Server {
    Server::new("stateless", "1.0.0")
        .tool(Chatty)
        .handler(Prompts)
}

/// The server with sessions (rmcp's default configuration).
fn service(server: Server) -> HttpService {
    server.streamable_http_service_with(StreamableHttpServerConfig::default())
}

/// The `_meta` of a 2026-07-28 request, with `extra` entries.
fn meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    meta.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    meta
}

/// A 2026-07-28 request: the version in the header and `_meta`, the SEP-2243 method headers.
fn request(id: u64, method: &str, mut params: Value) -> http::Request<String> {
    params["_meta"] = meta(params.get("_meta").cloned().unwrap_or(json!({})));
    let mut builder = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        builder = builder.header("mcp-name", name);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    builder.body(body.to_string()).unwrap()
}

/// The JSON-RPC messages of a response, JSON or SSE, read as they come.
struct Messages {
    body: axum::body::Body,
    buffered: String,
    /// A JSON response: the whole body is one message.
    json: bool,
}

impl Messages {
    /// The next message; `None` when the body ended.
    async fn next(&mut self) -> Option<Value> {
        loop {
            if !self.json
                && let Some(end) = self.buffered.find("\n\n")
            {
                let event: String = self.buffered.drain(..end + 2).collect();
                let data: String = (event.lines())
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if !data.is_empty() {
                    return Some(serde_json::from_str(&data).unwrap());
                }
                continue;
            }
            match within(self.body.frame()).await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffered.push_str(std::str::from_utf8(&data).unwrap());
                    }
                }
                _ if self.json && !self.buffered.is_empty() => {
                    let message = serde_json::from_str(&self.buffered).unwrap();
                    self.buffered.clear();
                    return Some(message);
                }
                _ => return None,
            }
        }
    }

    /// Every message until the body ends.
    async fn all(mut self) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(message) = self.next().await {
            all.push(message);
        }
        all
    }
}

/// Sends `request`: the status, and the messages of the response.
async fn send(service: &mut HttpService, request: http::Request<String>) -> (u16, Messages) {
    let response = within(service.call(request)).await.unwrap();
    let status = response.status().as_u16();
    let json = (response.headers().get("content-type"))
        .is_some_and(|value| value.to_str().unwrap().starts_with("application/json"));
    let body = response.into_body();
    let messages = Messages {
        body,
        buffered: String::new(),
        json,
    };
    (status, messages)
}

/// A 2025-11-25 session: its id.
async fn open_session(service: &mut HttpService) -> String {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "classic", "version": "1"},
        },
    });
    let request = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize.to_string())
        .unwrap();
    let response = within(service.call(request)).await.unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"].to_str().unwrap();
    session.to_owned()
}

/// A request of the 2025-11-25 session `session`.
fn in_session(session: &str, body: Value) -> http::Request<String> {
    http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", session)
        .body(body.to_string())
        .unwrap()
}

#[tokio::test]
async fn the_methods_the_revision_removed_are_not_found_with_the_requests_id() {
    let mut service = service(server());
    // As the suite sends them: only `_meta`, so rmcp cannot read them as 2025 requests.
    for (id, method) in [
        (10, "initialize"),
        (11, "ping"),
        (12, "logging/setLevel"),
        (13, "resources/subscribe"),
        (14, "resources/unsubscribe"),
    ] {
        let (status, messages) = send(&mut service, request(id, method, json!({}))).await;
        let answer = messages.all().await;
        assert_eq!(status, 404, "{method}: {answer:?}");
        assert_eq!(answer[0]["id"], id, "{method}");
        assert_eq!(answer[0]["error"]["code"], -32601, "{method}");
    }
    // Well-formed 2025 requests, sent as 2026-07-28 requests.
    let set_level = request(20, "logging/setLevel", json!({"level": "info"}));
    let (status, messages) = send(&mut service, set_level).await;
    let answer = messages.all().await;
    assert_eq!(
        (status, answer[0]["error"]["code"].clone()),
        (404, json!(-32601))
    );
    assert_eq!(
        answer[0]["error"]["message"],
        "Method not found: 'logging/setLevel' was removed in MCP 2026-07-28; set \
         io.modelcontextprotocol/logLevel in the _meta of the request whose log messages you \
         want."
    );
    let classic = json!({
        "protocolVersion": "2026-07-28",
        "capabilities": {},
        "clientInfo": {"name": "confused", "version": "1"},
    });
    let (status, messages) = send(&mut service, request(21, "initialize", classic)).await;
    let answer = messages.all().await;
    assert_eq!(status, 404, "{answer:?}");
    assert_eq!(
        (answer[0]["id"].clone(), answer[0]["error"]["code"].clone()),
        (json!(21), json!(-32601))
    );
}

#[tokio::test]
async fn a_classic_initialize_naming_2026_07_28_negotiates_a_2025_session() {
    let mut service = service(server());
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2026-07-28",
            "capabilities": {},
            "clientInfo": {"name": "classic", "version": "1"},
        },
    });
    let request = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize.to_string())
        .unwrap();
    let (status, messages) = send(&mut service, request).await;
    let answer = messages.all().await;
    assert_eq!(status, 200);
    assert_eq!(answer[0]["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        answer[0]["result"]["capabilities"]["tools"]["listChanged"],
        true
    );
}

#[tokio::test]
async fn a_2025_session_keeps_its_methods() {
    let mut service = service(server());
    let session = open_session(&mut service).await;
    // The params do not fit: said so, as before.
    let bare = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {}});
    let (status, messages) = send(&mut service, in_session(&session, bare)).await;
    let answer = messages.all().await;
    assert_eq!(
        (status, answer[0]["error"]["code"].clone()),
        (200, json!(-32602))
    );
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    let (status, messages) = send(&mut service, in_session(&session, ping)).await;
    assert_eq!(
        (status, messages.all().await[0]["result"].clone()),
        (200, json!({}))
    );
}

/// The levels of the log messages a call of `chatty` brings, before its result.
async fn logged(service: &mut HttpService, request: http::Request<String>) -> Vec<String> {
    let (status, messages) = send(service, request).await;
    assert_eq!(status, 200);
    let messages = messages.all().await;
    let result = messages.last().unwrap();
    assert_eq!(
        result["result"]["content"][0]["text"], "done",
        "{messages:?}"
    );
    (messages.iter())
        .filter(|message| message["method"] == "notifications/message")
        .map(|message| message["params"]["level"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_2026_request_gets_log_messages_only_at_the_level_its_meta_sets() {
    let mut service = service(server());
    let call =
        |id, meta: Value| request(id, "tools/call", json!({"name": "chatty", "_meta": meta}));
    assert_eq!(
        logged(&mut service, call(1, json!({}))).await,
        Vec::<String>::new()
    );
    let warning = json!({"io.modelcontextprotocol/logLevel": "warning"});
    assert_eq!(
        logged(&mut service, call(2, warning)).await,
        ["warning", "error"]
    );
    let debug = json!({"io.modelcontextprotocol/logLevel": "debug"});
    assert_eq!(logged(&mut service, call(3, debug)).await.len(), 4);
    // Not an MCP level, or huge: as if not set, and never echoed.
    let huge = json!({"io.modelcontextprotocol/logLevel": "x".repeat(1 << 20)});
    assert_eq!(
        logged(&mut service, call(4, huge)).await,
        Vec::<String>::new()
    );
    let number = json!({"io.modelcontextprotocol/logLevel": 3});
    assert_eq!(
        logged(&mut service, call(5, number)).await,
        Vec::<String>::new()
    );

    // A 2025 session gets every message, as before, on its standalone stream (rmcp sends a
    // notification there unless it carries the call's progress token).
    let session = open_session(&mut service).await;
    let (_, mut standalone) = send(&mut service, standalone_stream(&session)).await;
    let call = json!({
        "jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "chatty"},
    });
    assert_eq!(
        logged(&mut service, in_session(&session, call)).await,
        Vec::<String>::new()
    );
    for level in ["debug", "info", "warning", "error"] {
        let message = standalone.next().await.unwrap();
        assert_eq!(message["params"]["level"], level, "{message}");
    }
    // Then those at the level it sets and above.
    let set_level = json!({
        "jsonrpc": "2.0", "id": 7, "method": "logging/setLevel", "params": {"level": "warning"},
    });
    let (_, answer) = send(&mut service, in_session(&session, set_level)).await;
    assert_eq!(answer.all().await[0]["result"], json!({}));
    let call = json!({
        "jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "chatty"},
    });
    assert_eq!(
        logged(&mut service, in_session(&session, call)).await,
        Vec::<String>::new()
    );
    for level in ["warning", "error"] {
        let message = standalone.next().await.unwrap();
        assert_eq!(message["params"]["level"], level, "{message}");
    }
}

/// The standalone GET stream of the 2025 session `session`.
fn standalone_stream(session: &str) -> http::Request<String> {
    http::Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", session)
        .body(String::new())
        .unwrap()
}

/// Waits until `count` listen streams are open.
async fn listening(changes: &ListChanges, count: usize) {
    within(async {
        while changes.listening() != count {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

/// A `subscriptions/listen` request asking for `notifications`.
fn listen(id: u64, notifications: Value) -> http::Request<String> {
    request(
        id,
        "subscriptions/listen",
        json!({"notifications": notifications}),
    )
}

#[tokio::test]
async fn a_listen_stream_is_acknowledged_then_carries_the_changes_its_filter_asks_for() {
    let server = server();
    let changes = server.list_changes();
    let mut service = service(server);
    // Unknown filter keys are ignored.
    let (status, mut tools) = send(
        &mut service,
        listen(7, json!({"toolsListChanged": true, "bogus": 1})),
    )
    .await;
    assert_eq!(status, 200);
    let ack = tools.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );

    let (_, mut prompts) = send(&mut service, listen(8, json!({"promptsListChanged": true}))).await;
    assert_eq!(
        prompts.next().await.unwrap()["method"],
        "notifications/subscriptions/acknowledged"
    );
    // A stream subscribes right after its acknowledgement is sent.
    listening(&changes, 2).await;

    changes.tools();
    changes.prompts();
    let tool_change = tools.next().await.unwrap();
    assert_eq!(tool_change["method"], "notifications/tools/list_changed");
    assert_eq!(
        tool_change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    // The prompts stream skipped the tool change its filter did not ask for.
    let prompt_change = prompts.next().await.unwrap();
    assert_eq!(
        prompt_change["method"],
        "notifications/prompts/list_changed"
    );
    assert_eq!(
        prompt_change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        8
    );

    // A client that goes away leaves no stream behind.
    drop((tools, prompts));
    listening(&changes, 0).await;
}

#[tokio::test]
async fn a_2025_session_hears_list_changes_on_its_standalone_stream() {
    let server = server();
    let changes = server.list_changes();
    let mut service = service(server);
    let session = open_session(&mut service).await;
    let (status, mut standalone) = send(&mut service, standalone_stream(&session)).await;
    assert_eq!(status, 200);
    changes.tools();
    let change = standalone.next().await.unwrap();
    assert_eq!(change["method"], "notifications/tools/list_changed");
    assert!(
        change
            .get("params")
            .is_none_or(|params| params["_meta"].is_null())
    );

    // Listening is of 2026-07-28 only.
    let listen = json!({
        "jsonrpc": "2.0", "id": 5, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}},
    });
    let (status, messages) = send(&mut service, in_session(&session, listen)).await;
    assert_eq!(
        (status, messages.all().await[0]["error"]["code"].clone()),
        (200, json!(-32601))
    );
}

#[tokio::test]
async fn many_listen_streams_each_get_a_change_and_leave_nothing_behind() {
    let server = server();
    let changes = server.list_changes();
    let mut service = service(server);
    let mut streams = Vec::new();
    for id in 0..64 {
        let (status, mut stream) =
            send(&mut service, listen(id, json!({"toolsListChanged": true}))).await;
        assert_eq!(status, 200);
        assert_eq!(
            stream.next().await.unwrap()["method"],
            "notifications/subscriptions/acknowledged"
        );
        streams.push(stream);
    }
    listening(&changes, 64).await;
    changes.tools();
    for (id, stream) in streams.iter_mut().enumerate() {
        let change = stream.next().await.unwrap();
        assert_eq!(
            change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            id
        );
    }
    drop(streams);
    listening(&changes, 0).await;
}

#[tokio::test]
async fn a_removed_initialize_with_a_huge_meta_is_answered_short() {
    let mut service = service(server());
    let junk = "x".repeat(1 << 20);
    let params = json!({"_meta": {"junk": junk, "nested": {"deeper": [junk]}}});
    let (status, mut messages) = send(&mut service, request(3, "initialize", params)).await;
    assert_eq!(status, 404);
    let answer = messages.next().await.unwrap();
    assert_eq!(answer["id"], 3);
    assert!(answer.to_string().len() < 400, "{answer}");
    // A `_meta` that is not an object: the 2026-07-28 request cannot be read as one.
    let body = json!({
        "jsonrpc": "2.0", "id": 4, "method": "subscriptions/listen",
        "params": {"notifications": {}, "_meta": "2026-07-28"},
    });
    let request = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(body.to_string())
        .unwrap();
    let (status, messages) = send(&mut service, request).await;
    let answer = messages.all().await;
    assert_eq!(status, 400, "{answer:?}");
    assert_eq!(answer[0]["id"], 4);
}
