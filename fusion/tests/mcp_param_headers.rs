//! `x-mcp-header` arguments over Streamable HTTP (MCP 2026-07-28, SEP-2243): the annotation is
//! listed on its field in flat and grouped exposition, a `tools/call` whose `Mcp-Param-*` header
//! disagrees with its body is refused with HTTP 400 and `-32020`, and a huge header is never
//! echoed whole. Called as the tower service axum would mount (no socket, so no header size
//! limit of hyper's in front).
#![cfg(feature = "http")]

use fusion::portability::Provider;
use fusion::server::{Exposition, HttpService, Server};
use http::HeaderValue;
use http_body_util::BodyExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tower_service::Service;

#[derive(Deserialize, JsonSchema)]
struct Target {
    /// Where to run.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
    /// How many.
    #[serde(default)]
    count: u32,
}

/// Deployments.
struct Fleet;

#[fusion::tool]
impl Fleet {
    /// Starts machines.
    #[action]
    fn start(&self, target: Target) -> String {
        format!("started {} in {}", target.count, target.region)
    }

    /// Stops machines, the region described otherwise.
    #[action]
    fn stop(&self, target: StopTarget) -> String {
        format!("stopped in {}", target.region)
    }
}

#[derive(Deserialize, JsonSchema)]
struct StopTarget {
    /// Where to stop.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
}

/// A server of the fleet, checked against the providers that take `x-mcp-header`.
fn fleet(exposition: Exposition) -> Server {
    Server::new("fleet", "1.0.0")
        .portable_to([Provider::Anthropic, Provider::OpenAi])
        .tool(Fleet)
        .exposition(exposition)
}

/// A 2026-07-28 `tools/call` of `name` with `arguments`, its `Mcp-Name` header `mcp_name`, and
/// `headers` besides.
fn call(
    name: &str,
    arguments: Value,
    mcp_name: &[u8],
    headers: &[(&str, &[u8])],
) -> http::Request<String> {
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let mut request = http::Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", HeaderValue::from_bytes(mcp_name).unwrap());
    for (header, value) in headers {
        request = request.header(*header, HeaderValue::from_bytes(value).unwrap());
    }
    request.body(body.to_string()).unwrap()
}

/// The status and JSON-RPC message of the answer (the last event of a stream).
async fn send(service: &mut HttpService, request: http::Request<String>) -> (u16, Value) {
    let response = service.call(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    let json = (text.lines().rev())
        .find_map(|line| line.strip_prefix("data:"))
        .unwrap_or(&text)
        .trim()
        .to_owned();
    let message = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {text}"));
    (status, message)
}

#[test]
fn the_annotation_is_listed_on_its_field_in_both_expositions() {
    let flat = fleet(Exposition::Flat).tool_definitions();
    for tool in &flat {
        assert_eq!(
            tool.input_schema["properties"]["region"]["x-mcp-header"],
            "Region"
        );
    }
    let grouped = fleet(Exposition::Grouped).tool_definitions();
    // Described differently by the two actions: one field, the header on it.
    let region = &grouped[0].input_schema["properties"]["region"];
    assert_eq!(
        (&region["type"], &region["x-mcp-header"]),
        (&json!("string"), &json!("Region"))
    );
}

#[tokio::test]
async fn a_param_header_must_match_the_body() {
    for (exposition, name, arguments) in [
        (
            Exposition::Flat,
            "fleet_start",
            json!({"region": "us-west1", "count": 2}),
        ),
        (
            Exposition::Grouped,
            "fleet",
            json!({"action": "start", "region": "us-west1", "count": 2}),
        ),
    ] {
        let mut service = fleet(exposition).streamable_http_service();
        let named = name.as_bytes();
        let with = |region: &'static [u8]| vec![("mcp-param-region", region)];

        let (status, ok) = send(
            &mut service,
            call(name, arguments.clone(), named, &with(b"us-west1")),
        )
        .await;
        assert_eq!(
            (status, &ok["result"]["content"][0]["text"]),
            (200, &json!("started 2 in us-west1")),
            "{ok}"
        );
        // Base64, as a client sends a value a header cannot carry.
        let encoded = with(b"=?base64?dXMtd2VzdDE=?=");
        let (status, ok) = send(&mut service, call(name, arguments.clone(), named, &encoded)).await;
        assert_eq!(status, 200, "{ok}");

        for (headers, says) in [
            (with(b"eu-central1"), "does not match body value `us-west1`"),
            (Vec::new(), "missing Mcp-Param-Region header"),
            (
                with(b"=?base64?dXMtd2VzdDE?=".as_slice()),
                "not valid Base64",
            ),
            (with(b"us-west\xff"), "invalid characters"),
            // Base64 of bytes that are not UTF-8 (0xff).
            (with(b"=?base64?/w==?=".as_slice()), "not valid Base64"),
        ] {
            let (status, refused) =
                send(&mut service, call(name, arguments.clone(), named, &headers)).await;
            assert_eq!(
                (status, &refused["error"]["code"]),
                (400, &json!(-32020)),
                "{refused}"
            );
            assert_eq!(refused["id"], 7);
            let message = refused["error"]["message"].as_str().unwrap();
            assert!(message.contains(says), "{message}");
        }
    }
}

#[tokio::test]
async fn a_huge_header_is_not_echoed_whole() {
    let mut service = fleet(Exposition::Flat).streamable_http_service();
    let arguments = json!({"region": "us-west1"});
    let huge = vec![b'a'; 1 << 20];
    let param = [("mcp-param-region", huge.as_slice())];
    let (status, refused) = send(
        &mut service,
        call("fleet_start", arguments.clone(), b"fleet_start", &param),
    )
    .await;
    assert_eq!((status, &refused["error"]["code"]), (400, &json!(-32020)));
    let message = refused["error"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        format!(
            "Mcp-Param-Region header `{}…` (1048576 bytes) does not match body value `us-west1`",
            "a".repeat(64)
        )
    );

    // A tool name that is not UTF-8.
    let region = [("mcp-param-region", b"us-west1".as_slice())];
    let (status, refused) = send(
        &mut service,
        call("fleet_start", arguments.clone(), b"fleet_\xe9", &region),
    )
    .await;
    assert_eq!((status, &refused["error"]["code"]), (400, &json!(-32020)));
    assert_eq!(
        refused["error"]["message"],
        "Mcp-Name header contains invalid characters"
    );

    let (status, refused) = send(&mut service, call("fleet_start", arguments, &huge, &[])).await;
    assert_eq!((status, &refused["error"]["code"]), (400, &json!(-32020)));
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.len() < 200 && message.contains("(1048576 bytes)"),
        "{message}"
    );
}
