//! One request on a new HTTP/1.1 connection with hyper's client, and the reply as it came
//! (status, headers, body read whole), for the tests that speak Streamable HTTP to a server on
//! a loopback port (`server_http/harness.rs`, `support/mcp_http.rs`); each adds its own
//! readings of a reply.

use std::net::SocketAddr;

use http_body_util::BodyExt;
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// An HTTP reply, its body read whole.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: String,
}

/// Sends `request` to `addr` on a new HTTP/1.1 connection and reads the reply whole, however
/// long the server takes.
pub(crate) async fn send<B>(addr: SocketAddr, request: http::Request<B>) -> Reply
where
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// A POST to `/mcp` with the headers MCP clients send (MCP 2025-06-18), and `session` as
/// `Mcp-Session-Id` when given.
pub(crate) fn post_request(addr: SocketAddr, session: Option<&str>) -> http::request::Builder {
    let mut builder = http::Request::post("/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(session) = session {
        builder = builder.header("mcp-session-id", session);
    }
    builder
}
