//! Raw Streamable HTTP for the auth tests: one JSON-RPC message POSTed to `/mcp` on a
//! connection of its own, with or without a bearer token and a session, and the reply as it
//! came (status, headers, body), so a test can assert on a 401 or 403 challenge as well as on
//! the JSON-RPC response.

use std::net::SocketAddr;

use http_body_util::Full;
use serde_json::{Value, json};

#[path = "http1.rs"]
mod http1;

use http1::post_request;
pub(crate) use http1::{Reply, send};

impl Reply {
    /// The JSON-RPC response in the reply's event stream (or plain JSON body).
    pub(crate) fn rpc(&self) -> Value {
        let body = self.body.trim();
        if body.starts_with('{') {
            return serde_json::from_str(body).unwrap();
        }
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message.get("id").is_some())
            .unwrap_or_else(|| panic!("no response in {body}"))
    }

    /// The first text of the tool result in a 200 reply.
    pub(crate) fn text(&self) -> String {
        assert_eq!(self.status, 200, "{}", self.body);
        let result = self.rpc();
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no text in {result}"))
            .to_owned()
    }

    /// The `WWW-Authenticate` header, empty when there is none.
    pub(crate) fn challenge(&self) -> String {
        (self.headers.get("www-authenticate"))
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default()
    }

    /// The challenge's `error_description`, empty when there is none.
    pub(crate) fn error_description(&self) -> String {
        let challenge = self.challenge();
        (challenge.split("error_description=\"").nth(1))
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("")
            .to_owned()
    }
}

/// POSTs `message` to `/mcp` (MCP 2025-06-18), with `token` as a bearer token and `session` as
/// `Mcp-Session-Id` when given.
pub(crate) async fn post(
    addr: SocketAddr,
    token: Option<&str>,
    session: Option<&str>,
    message: Value,
) -> Reply {
    let mut request = post_request(addr, None);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    send(addr, request.body(Full::from(message.to_string())).unwrap()).await
}

/// An `initialize` request from client `name`.
pub(crate) fn initialize(name: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"},
        },
    })
}

/// A `tools/call` of `action` of the grouped tool `billing`, without a session.
pub(crate) fn billing_call(action: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "billing", "arguments": {"action": action}},
    })
}

/// Opens a session with `token` (`initialize`, then `notifications/initialized`); returns its
/// id.
pub(crate) async fn open_session(addr: SocketAddr, token: &str) -> String {
    let reply = post(addr, Some(token), None, initialize("auth-test")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let session = reply.headers["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = post(addr, Some(token), Some(&session), initialized).await;
    assert_eq!(reply.status, 202, "{}", reply.body);
    session
}
