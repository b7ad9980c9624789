//! The load generator's MCP client (one session on one keep-alive HTTP/1.1 connection, MCP
//! 2025-06-18 over Streamable HTTP) and what it reads of a server process in `/proc`.

use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use serde_json::{Value, json};

/// The protocol revision the client asks for in `initialize`.
const PROTOCOL: &str = "2025-06-18";

/// An MCP session on its own connection.
pub(crate) struct Session {
    sender: SendRequest<Full<Bytes>>,
    addr: String,
    /// `Mcp-Session-Id`, if the server gave one.
    id: Option<String>,
    /// The protocol revision the server answered `initialize` with.
    protocol: String,
    next_id: u64,
}

impl Session {
    /// Connects, sends `initialize` and `notifications/initialized`.
    pub(crate) async fn open(addr: &str) -> anyhow::Result<Session> {
        let mut session = Session {
            sender: crate::measure::connect(addr).await?,
            addr: addr.to_owned(),
            id: None,
            protocol: PROTOCOL.to_owned(),
            next_id: 0,
        };
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL, "capabilities": {},
                "clientInfo": {"name": "peers", "version": "1"},
            },
        });
        let response = session.send(http::Method::POST, Some(&initialize)).await?;
        anyhow::ensure!(
            response.status == 200,
            "{addr}: initialize answered {} {}",
            response.status,
            response.message
        );
        session.id = response.session_id;
        if let Some(version) = response.message["result"]["protocolVersion"].as_str() {
            session.protocol = version.to_owned();
        }
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = session.send(http::Method::POST, Some(&initialized)).await?;
        anyhow::ensure!(
            response.status == 202,
            "{addr}: notifications/initialized answered {}",
            response.status
        );
        Ok(session)
    }

    /// One `tools/call`: the HTTP status and the JSON-RPC message answering it.
    pub(crate) async fn call(
        &mut self,
        tool: &str,
        arguments: &Value,
    ) -> anyhow::Result<(u16, Value)> {
        self.next_id += 1;
        let request = json!({
            "jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        });
        let response = self.send(http::Method::POST, Some(&request)).await?;
        anyhow::ensure!(
            response.message["id"] == self.next_id,
            "{}: an answer to another request: {}",
            self.addr,
            response.message
        );
        Ok((response.status, response.message))
    }

    /// Ends the session (`DELETE`); a server that refuses only keeps it until it expires.
    pub(crate) async fn close(mut self) {
        if self.id.is_some() {
            let _ = self.send(http::Method::DELETE, None).await;
        }
    }

    async fn send(
        &mut self,
        method: http::Method,
        body: Option<&Value>,
    ) -> anyhow::Result<Response> {
        let mut request = http::Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", &self.addr)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(id) = &self.id {
            request = request
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", &self.protocol);
        }
        let body = body.map_or_else(Bytes::new, |body| Bytes::from(body.to_string()));
        self.sender.ready().await?;
        let response = self
            .sender
            .send_request(request.body(Full::new(body))?)
            .await?;
        let status = response.status().as_u16();
        let session_id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = response.into_body().collect().await?.to_bytes();
        Ok(Response {
            status,
            session_id,
            message: crate::measure::message(std::str::from_utf8(&body)?)?,
        })
    }
}

struct Response {
    status: u16,
    session_id: Option<String>,
    message: Value,
}

/// Opens a session on a server that may still be starting, retrying for up to `patience`.
pub(crate) async fn wait_for_session(addr: &str, patience: Duration) -> anyhow::Result<Session> {
    let start = Instant::now();
    loop {
        match Session::open(addr).await {
            Ok(session) => return Ok(session),
            Err(error) if start.elapsed() > patience => {
                anyhow::bail!("{addr}: no session after {patience:?}: {error}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// What a model reads of a `tools/call` answer: the text of each content block of a result,
/// or a JSON-RPC error's code, message and data.
pub(crate) fn model_text(message: &Value) -> String {
    if let Some(error) = message.get("error") {
        return format!("JSON-RPC error: {error}");
    }
    let result = &message["result"];
    let texts: Vec<&str> = result["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect())
        .unwrap_or_default();
    format!("isError: {}\n{}", result["isError"], texts.join("\n"))
}
