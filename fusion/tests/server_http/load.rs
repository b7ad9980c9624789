//! 200 calls in flight over HTTP, mixed (successes, validation errors, not-found errors, unknown
//! actions), each on its own connection, under a concurrency limit of 200: every call is answered
//! exactly once (counted by JSON-RPC id), with the answer its kind calls for, and none is
//! refused `SERVER_BUSY`. In a session (MCP 2025-06-18) and without one (2026-07-28). The
//! `http_load` harness (`benches/http_load/`) runs the same check against a server process.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use fusion::ToolError;
use fusion::guard::{ConcurrencyLimit, GuardSpec};
use fusion::server::Server;
use http_body_util::Full;
use hyper::body::Bytes;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::harness::{Reply, open_session, send, within};

/// Calls in flight at once, and the concurrency limit on the tool.
const CALLS: u64 = 200;
const LIMIT: usize = 200;

#[derive(Deserialize, JsonSchema)]
struct GetArgs {
    /// The entry's id; only `e1` exists.
    id: String,
}

/// A ledger with one entry, `e1`.
struct Ledger;

/// A ledger with one entry.
#[fusion::tool]
impl Ledger {
    /// Reads an entry; holds its slot a while, so that the calls overlap.
    #[action(read_only)]
    async fn get(&self, args: GetArgs) -> Result<String, ToolError> {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if args.id == "e1" {
            Ok("entry e1".to_owned())
        } else {
            Err(ToolError::not_found("No entry with that id"))
        }
    }

    /// Counts the entries.
    #[action(read_only)]
    fn count(&self) -> u64 {
        1
    }
}

/// Serves the ledger under a concurrency limit of [`LIMIT`]; stops when the token is dropped.
async fn start() -> (SocketAddr, tokio_util::sync::DropGuard) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let http = Server::new("ledger", "1.0.0")
        .tool(Ledger)
        .guard(
            "ledger",
            GuardSpec::new().concurrency(ConcurrencyLimit::new(LIMIT, 0)),
        )
        .http()
        .graceful_shutdown(stop.clone().cancelled_owned());
    tokio::spawn(http.serve_on(listener));
    (addr, stop.drop_guard())
}

/// The arguments of call `id` and the outcome they must get: four kinds in turn.
fn kind(id: u64) -> (Value, &'static str) {
    match id % 4 {
        0 => (json!({"action": "get", "id": "e1"}), "ok"),
        1 => (json!({"action": "get", "id": 7}), "VALIDATION_ERROR"),
        2 => (json!({"action": "get", "id": "e9"}), "NOT_FOUND"),
        _ => (json!({"action": "delete", "id": "e1"}), "UNKNOWN_ACTION"),
    }
}

/// `ok` for a tool result that is not an error, else its envelope's code.
fn outcome(message: &Value) -> String {
    let result = &message["result"];
    assert!(result.is_object(), "not a tool result: {message}");
    if result["isError"] != true {
        return "ok".to_owned();
    }
    result["_meta"]["fusion/error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("an error without a code: {message}"))
        .to_owned()
}

/// A `tools/call` of the ledger with id `id`: in `session` (2025-06-18), or without one in the
/// 2026-07-28 lifecycle (protocol version in a header and in `_meta`).
fn call(addr: SocketAddr, session: Option<&str>, id: u64) -> http::Request<Full<Bytes>> {
    let (arguments, _) = kind(id);
    let mut params = json!({"name": "ledger", "arguments": arguments});
    let mut request = http::Request::post("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    match session {
        Some(session) => {
            request = request
                .header("mcp-protocol-version", "2025-06-18")
                .header("mcp-session-id", session);
        }
        None => {
            request = request
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "ledger");
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    request
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

/// Sends [`CALLS`] calls at once, each on its own connection; checks every id is answered
/// exactly once with the outcome of its kind, and that none was refused `SERVER_BUSY`.
async fn mixed_calls(addr: SocketAddr, session: Option<&str>) {
    let calls: Vec<_> = (1..=CALLS)
        .map(|id| tokio::spawn(send(addr, call(addr, session, id))))
        .collect();
    let mut answered: HashMap<u64, usize> = HashMap::new();
    let mut outcomes: HashMap<String, usize> = HashMap::new();
    for call in calls {
        let reply: Reply = within(call).await.expect("no panic");
        assert_eq!(reply.status, 200, "{reply:?}");
        let message = reply.message();
        let id = message["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("no id: {message}"));
        *answered.entry(id).or_default() += 1;
        let got = outcome(&message);
        assert_ne!(got, "SERVER_BUSY", "refused below the limit: {message}");
        assert_eq!(got, kind(id).1, "call {id}: {message}");
        *outcomes.entry(got).or_default() += 1;
    }
    let missing: Vec<u64> = (1..=CALLS)
        .filter(|id| !answered.contains_key(id))
        .collect();
    assert!(missing.is_empty(), "unanswered: {missing:?}");
    let twice: Vec<_> = answered.iter().filter(|&(_, &n)| n > 1).collect();
    assert!(twice.is_empty(), "answered more than once: {twice:?}");
    assert_eq!(answered.len() as u64, CALLS);
    for code in ["ok", "VALIDATION_ERROR", "NOT_FOUND", "UNKNOWN_ACTION"] {
        assert_eq!(outcomes.get(code), Some(&50), "{outcomes:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_mixed_calls_in_one_session_are_each_answered_once() {
    let (addr, _stop) = start().await;
    let session = open_session(addr).await;
    mixed_calls(addr, Some(&session)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_mixed_stateless_calls_are_each_answered_once() {
    let (addr, _stop) = start().await;
    mixed_calls(addr, None).await;
}
