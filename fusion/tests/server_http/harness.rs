//! A server on a loopback port, a hyper client, and a raw-socket client.

use std::net::SocketAddr;

use fusion::server::{HttpServer, Server};
use http_body_util::Full;
use hyper::body::Bytes;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

pub(crate) use crate::http1::{Reply, post_request};
pub(crate) use crate::within::within;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct EchoArgs {
    /// Anything.
    pub(crate) value: Value,
}

/// Echoes its argument.
#[fusion::tool]
#[action(read_only)]
pub(crate) fn echo(args: EchoArgs) -> String {
    args.value.to_string()
}

/// A running server: its address, and the token that shuts it down.
pub(crate) struct Running {
    pub(crate) addr: SocketAddr,
    pub(crate) stop: CancellationToken,
    pub(crate) task: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Serves the echo tool with `configure`d settings on a loopback port.
pub(crate) async fn start(configure: impl FnOnce(HttpServer) -> HttpServer) -> Running {
    start_server(Server::new("echo-server", "1.0.0").tool(Echo), configure).await
}

/// Serves `server` with `configure`d settings on a loopback port.
pub(crate) async fn start_server(
    server: Server,
    configure: impl FnOnce(HttpServer) -> HttpServer,
) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    let http = configure(server.http()).graceful_shutdown(stop.clone().cancelled_owned());
    let task = tokio::spawn(http.serve_on(listener));
    Running { addr, stop, task }
}

impl Reply {
    /// The JSON-RPC message of the body: the body itself, or the last `data:` event of an event
    /// stream.
    pub(crate) fn message(&self) -> Value {
        let text = if self.body.trim_start().starts_with('{') {
            self.body.as_str()
        } else {
            self.body
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|data| data.starts_with('{'))
                .unwrap_or_else(|| panic!("no JSON-RPC message in {}", self.body))
        };
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Sends one request with hyper's HTTP/1.1 client on a new connection; fails after ten
/// seconds.
pub(crate) async fn send<B>(addr: SocketAddr, request: http::Request<B>) -> Reply
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    within(crate::http1::send(addr, request)).await
}

/// POSTs `body` to `/mcp`.
pub(crate) async fn post(addr: SocketAddr, session: Option<&str>, body: impl Into<Bytes>) -> Reply {
    let request = post_request(addr, session)
        .body(Full::new(body.into()))
        .unwrap();
    send(addr, request).await
}

/// Ends `session` (HTTP `DELETE`).
pub(crate) async fn delete(addr: SocketAddr, session: &str) -> Reply {
    let request = http::Request::delete("/mcp")
        .header("host", addr.to_string())
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18")
        .body(Full::new(Bytes::new()))
        .unwrap();
    send(addr, request).await
}

/// An `initialize` request with id `id`.
pub(crate) fn initialize(id: u64) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    })
    .to_string()
}

/// Opens a session: `initialize`, then `notifications/initialized`. Returns its id.
pub(crate) async fn open_session(addr: SocketAddr) -> String {
    let init = post(addr, None, initialize(1)).await;
    assert_eq!(init.status, 200, "{init:?}");
    let session = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let accepted = post(addr, Some(&session), initialized).await;
    assert_eq!(accepted.status, 202, "{accepted:?}");
    session
}

/// Writes `bytes` on a new raw connection and reads until the server closes it (or ten
/// seconds pass: a failure). Returns what the server sent.
pub(crate) async fn raw_exchange(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    read_to_close(&mut stream).await
}

/// Reads until the server closes the connection; fails after ten seconds.
pub(crate) async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    within(async {
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    String::from_utf8_lossy(&received).into_owned()
}
