//! `Server::streamable_http_service` (feature `http`) answers MCP over Streamable HTTP: called
//! as the tower service axum would mount, without a socket.
#![cfg(feature = "http")]

use fusion::server::{Server, StreamableHttpServerConfig};
use http_body_util::BodyExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tower_service::Service;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

/// Adds two numbers.
#[fusion::tool]
#[action(read_only)]
fn add(args: AddArgs) -> f64 {
    args.a + args.b
}

async fn post(service: &mut fusion::server::HttpService, body: Value) -> Value {
    let request = http::Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_string())
        .unwrap();
    let response = service.call(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)))
}

#[tokio::test]
async fn the_http_service_serves_tools_statelessly() {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let mut service = Server::new("calc", "0.3.0")
        .tool(Add)
        .streamable_http_service_with(config);

    let init = post(
        &mut service,
        json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "curl", "version": "8"},
            },
        }),
    )
    .await;
    assert_eq!(
        init["result"]["serverInfo"],
        json!({"name": "calc", "version": "0.3.0"})
    );

    let sum = post(
        &mut service,
        json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        }),
    )
    .await;
    assert_eq!(sum["result"]["content"][0]["text"], "5.0", "{sum}");

    let invalid = post(
        &mut service,
        json!({
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": "two"}},
        }),
    )
    .await;
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    assert_eq!(
        invalid["result"]["_meta"]["fusion/error"]["code"],
        "VALIDATION_ERROR"
    );
}

/// Asks the client's model.
#[fusion::tool]
#[allow(
    deprecated,
    reason = "sampling, which 2026-07-28 clients may still declare"
)]
async fn haiku(ctx: fusion::RequestContext) -> Result<String, fusion::ToolError> {
    use rmcp::model::{CreateMessageRequestParams, SamplingMessage};
    let ask = SamplingMessage::user_text("A haiku.");
    let answer = ctx
        .sample(CreateMessageRequestParams::new(vec![ask], 40))
        .await?;
    Ok(format!("{:?}", answer.message.content))
}

#[tokio::test]
async fn a_2026_call_needing_a_capability_the_client_did_not_declare_is_400_and_32021() {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let mut service = Server::new("haiku", "1.0.0")
        .tool(Haiku)
        .streamable_http_service_with(config);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "curl", "version": "8"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "haiku", "arguments": {}, "_meta": meta},
    });
    let request = http::Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "haiku")
        .body(body.to_string())
        .unwrap();
    let response = service.call(request).await.unwrap();
    assert_eq!(response.status(), 400);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}
