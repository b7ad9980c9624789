//! The entry point: a whole session over a socket, Origin and Host checks, the user's layers
//! and routes, graceful shutdown.

use std::convert::Infallible;

use axum::routing::get;
use http_body_util::Full;
use hyper::body::Bytes;
use serde_json::json;

use crate::harness::{Running, initialize, open_session, post, post_request, send, start, within};

#[tokio::test]
async fn a_session_serves_tools_over_a_socket() {
    let Running { addr, stop, task } = start(|http| http).await;
    let session = open_session(addr).await;
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"value": [1, 2]}},
    });
    let reply = post(addr, Some(&session), call.to_string()).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.message()["result"]["content"][0]["text"], "[1,2]");
    stop.cancel();
    within(task).await.unwrap().unwrap();
}

/// A request with an `Origin` header and a body.
fn with_origin(addr: std::net::SocketAddr, origin: &str) -> http::Request<Full<Bytes>> {
    post_request(addr, None)
        .header("origin", origin)
        .body(Full::new(Bytes::from(crate::harness::initialize(1))))
        .unwrap()
}

#[tokio::test]
async fn a_foreign_origin_is_refused_by_default() {
    let Running { addr, .. } = start(|http| http).await;
    // MCP specification, Transports, Streamable HTTP, "Security Warning".
    let foreign = send(addr, with_origin(addr, "https://evil.example")).await;
    assert_eq!(foreign.status, 403, "{foreign:?}");
    let local_page = send(addr, with_origin(addr, "http://localhost:5173")).await;
    assert_eq!(local_page.status, 200, "{local_page:?}");
    // Clients other than browsers send no Origin.
    let no_origin = post(addr, None, crate::harness::initialize(1)).await;
    assert_eq!(no_origin.status, 200, "{no_origin:?}");
}

#[tokio::test]
async fn origins_are_configurable() {
    let Running { addr, .. } =
        start(|http| http.allowed_origins(["https://app.example.com"])).await;
    let listed = send(addr, with_origin(addr, "https://app.example.com")).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    let local_page = send(addr, with_origin(addr, "http://localhost:5173")).await;
    assert_eq!(local_page.status, 403, "{local_page:?}");

    let Running { addr, .. } = start(|http| http.any_origin()).await;
    let foreign = send(addr, with_origin(addr, "https://evil.example")).await;
    assert_eq!(foreign.status, 200, "{foreign:?}");
}

#[tokio::test]
async fn an_unlisted_host_is_refused() {
    let Running { addr, .. } = start(|http| http).await;
    let request = http::Request::post("/mcp")
        .header("host", "attacker.example")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(Bytes::from(crate::harness::initialize(1))))
        .unwrap();
    assert_eq!(send(addr, request).await.status, 403);

    let Running { addr, .. } = start(|http| http.allowed_hosts(["mcp.example.com"])).await;
    let request = http::Request::post("/mcp")
        .header("host", "mcp.example.com")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(Bytes::from(crate::harness::initialize(1))))
        .unwrap();
    assert_eq!(send(addr, request).await.status, 200);
}

/// A layer refusing requests without `authorization`, the shape a bearer-token layer has.
#[derive(Clone)]
struct RequireAuthorization;

impl<S> tower_layer::Layer<S> for RequireAuthorization {
    type Service = RequireAuthorizationService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        RequireAuthorizationService(inner)
    }
}

#[derive(Clone)]
struct RequireAuthorizationService<S>(S);

impl<S> tower_service::Service<axum::extract::Request> for RequireAuthorizationService<S>
where
    S: tower_service::Service<
            axum::extract::Request,
            Response = axum::response::Response,
            Error = Infallible,
        >,
    S::Future: Send + 'static,
{
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = futures::future::BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: axum::extract::Request) -> Self::Future {
        if request.headers().contains_key("authorization") {
            Box::pin(self.0.call(request))
        } else {
            Box::pin(async {
                let mut response = axum::response::Response::new(axum::body::Body::empty());
                *response.status_mut() = http::StatusCode::UNAUTHORIZED;
                Ok(response)
            })
        }
    }
}

#[tokio::test]
async fn layers_wrap_the_mcp_route_and_routes_stay_outside_them() {
    let metadata = axum::Router::new().route(
        "/.well-known/oauth-protected-resource",
        get(|| async { r#"{"resource":"http://localhost/mcp"}"# }),
    );
    let Running { addr, .. } =
        start(|http| http.layer(RequireAuthorization).routes(metadata)).await;

    let refused = post(addr, None, crate::harness::initialize(1)).await;
    assert_eq!(refused.status, 401, "{refused:?}");
    let request = post_request(addr, None)
        .header("authorization", "Bearer t")
        .body(Full::new(Bytes::from(crate::harness::initialize(1))))
        .unwrap();
    assert_eq!(send(addr, request).await.status, 200);

    let request = http::Request::get("/.well-known/oauth-protected-resource")
        .header("host", addr.to_string())
        .body(Full::new(Bytes::new()))
        .unwrap();
    let metadata = send(addr, request).await;
    assert_eq!(metadata.status, 200, "{metadata:?}");
    assert!(metadata.body.contains("resource"), "{metadata:?}");
}

#[tokio::test]
async fn the_path_is_configurable() {
    let Running { addr, .. } = start(|http| http.path("/v1/mcp")).await;
    assert_eq!(
        post(addr, None, crate::harness::initialize(1)).await.status,
        404
    );
    let request = http::Request::post("/v1/mcp")
        .header("host", addr.to_string())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(Full::new(Bytes::from(crate::harness::initialize(1))))
        .unwrap();
    assert_eq!(send(addr, request).await.status, 200);
}

#[tokio::test]
async fn shutdown_ends_open_event_streams_and_returns() {
    let Running { addr, stop, task } = start(|http| http).await;
    let session = open_session(addr).await;
    // A standalone event stream (HTTP GET) stays open until the session ends.
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    let request = http::Request::get("/mcp")
        .header("host", addr.to_string())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = within(sender.send_request(request)).await.unwrap();
    assert_eq!(response.status(), 200);

    stop.cancel();
    within(task).await.unwrap().unwrap();
    // No new connections once stopped.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

/// Whether the `ClientAddr` extension reached the MCP route, as an `x-peer` response header.
async fn report_peer(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let peer = request
        .extensions()
        .get::<fusion::auth::ClientAddr>()
        .map(|addr| addr.0.ip().to_string())
        .unwrap_or_else(|| "none".to_owned());
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert("x-peer", peer.parse().unwrap());
    response
}

#[tokio::test]
async fn serve_on_records_the_client_address_for_the_rate_limits() {
    // Calls without a principal are rate-limited by `ClientAddr`; without it every stateless
    // client would share one bucket, and each session would be a bucket of its own.
    let running = start(|http| http.layer(axum::middleware::from_fn(report_peer))).await;
    let reply = post(running.addr, None, initialize(1)).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.header("x-peer"), Some("127.0.0.1"));
    running.stop.cancel();
}
