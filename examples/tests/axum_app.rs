//! The `axum_app` example served on a loopback socket: its own route, fusion nested at `/mcp`
//! behind the app's bearer, CORS and request-id layers, called by rmcp's Streamable HTTP client
//! (reqwest) and by plain HTTP/1.1 requests.

#[path = "../axum_app.rs"]
mod axum_app;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use axum_app::{AppState, PLACE_SCOPE, app, bearer, dev_token};

#[path = "support/within.rs"]
mod within;
use within::within;

/// Serves the app on a free loopback port, as its `main` does; returns `host:port`.
async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let auth = bearer(&resource(&addr)).unwrap();
    let app = app(AppState::default(), auth, &resource(&addr));
    tokio::spawn(axum_app::serve(listener, app));
    addr
}

/// A development token for `subject` with the tool's scope.
fn token(addr: &str, subject: &str) -> String {
    dev_token(&resource(addr), subject, PLACE_SCOPE).unwrap()
}

fn resource(addr: &str) -> String {
    format!("http://{addr}/mcp")
}

/// Sends `request` (a whole HTTP/1.1 request with `Connection: close`) and returns the whole
/// response, head and body.
async fn send(addr: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    within(stream.read_to_string(&mut response)).await.unwrap();
    response
}

/// An rmcp client speaking Streamable HTTP to `/mcp` with a token for `subject`.
async fn connect(addr: &str, subject: &str) -> RunningService<RoleClient, ClientConfig> {
    let token = token(addr, subject);
    let config = StreamableHttpClientTransportConfig::with_uri(resource(addr)).auth_header(token);
    let transport = StreamableHttpClientTransport::from_config(config);
    within(ClientConfig::default().serve(transport))
        .await
        .expect("initialize succeeds")
}

async fn call(
    client: &RunningService<RoleClient, ClientConfig>,
    arguments: Value,
) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new("orders").with_arguments(arguments);
    within(client.call_tool(params)).await.expect("a result")
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

#[tokio::test]
async fn the_tool_sees_the_apps_state_caller_and_request_id() {
    let addr = serve().await;
    let client = connect(&addr, "alice").await;
    let tools = within(client.list_all_tools()).await.unwrap();
    assert_eq!(tools[0].name, "orders");

    let placed = call(
        &client,
        json!({"action": "place", "item": "teapot", "quantity": 2}),
    )
    .await;
    assert_eq!(placed.is_error, Some(false), "{placed:?}");
    let order: Value = serde_json::from_str(text(&placed)).unwrap();
    assert_eq!(order["item"], "teapot");
    assert_eq!(order["placed_by"], "alice", "the bearer layer's principal");
    let request_id = order["request_id"].as_str().unwrap();
    assert_eq!(
        request_id.len(),
        36,
        "the request-id layer's UUID: {request_id}"
    );

    // The app's own route reads the same state.
    let listed = send(
        &addr,
        &format!("GET /api/orders HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
    .await;
    assert!(listed.starts_with("HTTP/1.1 200"), "{listed}");
    assert!(listed.contains("x-request-id: "), "propagated: {listed}");
    let body = listed.split("\r\n\r\n").nth(1).unwrap();
    let orders: Value = serde_json::from_str(body).unwrap();
    assert_eq!(orders[0]["item"], "teapot");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_arguments_get_the_validation_envelope_over_http() {
    let addr = serve().await;
    let client = connect(&addr, "bob").await;
    let result = call(
        &client,
        json!({"action": "place", "item": "teapot", "quantity": 0}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let envelope = text(&result);
    assert!(
        envelope.starts_with("<validation_error action=\"orders.place\">"),
        "{envelope}"
    );
    assert!(envelope.contains("<field name=\"quantity\">"), "{envelope}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn mcp_without_a_token_is_refused_by_the_apps_bearer_layer() {
    let addr = serve().await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let response = send(
        &addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        ),
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 401"), "{response}");
    assert!(
        response
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{response}"
    );
    // The challenge names the RFC 9728 document, which answers without a token.
    let document = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    assert!(response.contains(&document), "{response}");
    let metadata = send(
        &addr,
        &format!(
            "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {addr}\r\n\
             Connection: close\r\n\r\n"
        ),
    )
    .await;
    assert!(metadata.starts_with("HTTP/1.1 200"), "{metadata}");
    assert!(metadata.contains(&resource(&addr)), "{metadata}");
}

#[tokio::test]
async fn the_apps_cors_layer_answers_preflights_and_fusion_checks_origins() {
    let addr = serve().await;
    let preflight = send(
        &addr,
        &format!(
            "OPTIONS /mcp HTTP/1.1\r\nHost: {addr}\r\nOrigin: https://shop.example.com\r\n\
             Access-Control-Request-Method: POST\r\n\
             Access-Control-Request-Headers: authorization, content-type\r\n\
             Connection: close\r\n\r\n"
        ),
    )
    .await;
    assert!(preflight.starts_with("HTTP/1.1 200"), "{preflight}");
    assert!(
        preflight.contains("access-control-allow-origin: https://shop.example.com"),
        "{preflight}"
    );

    // A page of another site, with a valid token: fusion's Origin check refuses it.
    let token = token(&addr, "carol");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let response = send(
        &addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nOrigin: https://evil.example\r\n\
             Authorization: Bearer {token}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        ),
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
}

/// A POST of `body` to `/mcp` with `token`, in `session` when given, as an MCP client sends it.
fn mcp_post(addr: &str, token: &str, session: Option<&str>, body: &str) -> String {
    let session = session.map_or(String::new(), |id| format!("Mcp-Session-Id: {id}\r\n"));
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n{session}\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\nConnection: close\r\n\r\n\
         {body}",
        body.len()
    )
}

/// The value of header `name` in a whole HTTP/1.1 response.
fn header_value<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next()?;
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[tokio::test]
async fn a_mounted_session_serves_only_the_caller_that_opened_it() {
    let addr = serve().await;
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let opened = send(
        &addr,
        &mcp_post(&addr, &token(&addr, "alice"), None, initialize),
    )
    .await;
    assert!(opened.starts_with("HTTP/1.1 200"), "{opened}");
    let session = header_value(&opened, "mcp-session-id").expect("a session id");

    // Another caller, with a valid token of its own, naming alice's session: no such session.
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let hijack = send(
        &addr,
        &mcp_post(&addr, &token(&addr, "mallory"), Some(session), list),
    )
    .await;
    assert!(hijack.starts_with("HTTP/1.1 404"), "{hijack}");
    assert!(hijack.contains("Session not found"), "{hijack}");

    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let own = send(
        &addr,
        &mcp_post(&addr, &token(&addr, "alice"), Some(session), initialized),
    )
    .await;
    assert!(own.starts_with("HTTP/1.1 202"), "{own}");
}

#[tokio::test]
async fn a_call_without_a_session_gets_rmcps_plain_text_400() {
    // The answer the HTTP guide's troubleshooting table quotes, word for word.
    let addr = serve().await;
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"orders","arguments":{"action":"list"}}}"#;
    let response = send(&addr, &mcp_post(&addr, &token(&addr, "alice"), None, call)).await;
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
    assert!(
        response.ends_with("Bad Request: Session ID is required"),
        "{response}"
    );
}
