//! Serving over MCP Streamable HTTP (feature `http`): [`Server::serve_http`] and
//! [`Server::http`] with safe defaults, or [`HttpServer::into_service`] to nest in an axum app of
//! your own ([`Server::streamable_http_service`] is the same, configured as rmcp's).
//!
#![doc = include_str!("../../docs/http.md")]

mod answer;
mod body;
mod config;
mod echoes;
mod front;
mod gate;
mod next;
mod removed;

/// The deployment guide: replicas behind a load balancer (sessions and stickiness, shared rate
/// limits in Redis, trusted proxies, failure modes), as `scripts/replicas.sh` runs them.
#[doc = include_str!("../../docs/deployment.md")]
pub mod deployment {}
mod serve;
mod sessions;
mod statuses;
mod step_up;
mod trim;

use std::io;

use tokio::net::TcpListener;

pub use config::{
    DEFAULT_ALLOWED_HOSTS, DEFAULT_ALLOWED_ORIGINS, DEFAULT_BODY_READ_TIMEOUT,
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_CALLER, DEFAULT_PATH,
    DEFAULT_SESSION_IDLE_TIMEOUT, HttpServer,
};
/// Streamable HTTP configuration, re-exported from rmcp, for
/// [`Server::streamable_http_service_with`].
pub use rmcp::transport::StreamableHttpServerConfig;

use super::Server;

/// The tower service [`Server::streamable_http_service`] returns: rmcp's behind fusion's
/// layers, as [`HttpServer::into_service`] returns it, but not an axum `Router` (so that
/// `Router::route_service` takes it).
#[derive(Clone, Debug)]
pub struct HttpService(axum::Router);

impl<B> tower_service::Service<http::Request<B>> for HttpService
where
    B: axum::body::HttpBody<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = axum::routing::future::RouteFuture<std::convert::Infallible>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        tower_service::Service::<http::Request<B>>::poll_ready(&mut self.0, cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        self.0.call(request)
    }
}

impl Server {
    /// A Streamable HTTP server for this server's tools, to configure before serving it; see
    /// [`HttpServer`] for the settings and their defaults.
    pub fn http(self) -> HttpServer {
        HttpServer::new(self)
    }

    /// Binds `addr` and serves MCP Streamable HTTP at `/mcp` with the defaults of
    /// [`HttpServer`] (loopback `Host`s and `Origin`s only, 1,000 sessions, 10,000 connections,
    /// timeouts, a 4 MiB body limit, `TCP_NODELAY`), forever. `server.http()…serve(addr)`
    /// changes a setting or adds a graceful shutdown.
    ///
    /// ```no_run
    /// # async fn demo(server: fusion::server::Server) -> std::io::Result<()> {
    /// server.serve_http("127.0.0.1:8080").await
    /// # }
    /// ```
    ///
    /// # Errors
    /// The error of binding `addr`.
    pub async fn serve_http(self, addr: impl tokio::net::ToSocketAddrs) -> io::Result<()> {
        self.http().serve(addr).await
    }

    /// [`Server::serve_http`] on a listener you bound (to print its port, or receive it from a
    /// service manager).
    ///
    /// ```no_run
    /// # async fn demo(server: fusion::server::Server) -> std::io::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    /// server.serve_http_on(listener).await
    /// # }
    /// ```
    ///
    /// # Errors
    /// None today (see [`HttpServer::serve_on`]).
    pub async fn serve_http_on(self, listener: TcpListener) -> io::Result<()> {
        self.http().serve_on(listener).await
    }

    /// MCP Streamable HTTP as a tower service answering at whatever path it is mounted, with
    /// rmcp's default configuration (sessions, loopback `Host`s only, any `Origin`) and fusion's
    /// defaults for the rest: the same service, behind the same layers, as
    /// `server.http().any_origin().into_service()` (see [`HttpServer::into_service`] for what it
    /// keeps and what your server then owns).
    pub fn streamable_http_service(self) -> HttpService {
        self.streamable_http_service_with(StreamableHttpServerConfig::default())
    }

    /// [`Server::streamable_http_service`] with rmcp's configuration: allowed hosts and
    /// origins, JSON responses, sessions or none (`legacy_session_mode`), the body limit,
    /// keep-alive and retry, a cancellation token that ends every session. Fusion's defaults
    /// apply to what it does not set (the session caps and idle timeout, the body read
    /// timeout); a `session_store` is not used (sessions are kept in memory). [`Server::http`]
    /// sets all of them.
    pub fn streamable_http_service_with(self, config: StreamableHttpServerConfig) -> HttpService {
        HttpService(self.http().into_service_with(config))
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::future::Future;

    use axum::extract::Request;
    use axum::response::Response;
    use bytes::Bytes;
    use http_body_util::BodyExt;
    use tower::util::BoxCloneSyncService;
    use tower::{Layer, Service, ServiceExt};

    use super::*;

    /// `layer` alone, around a service answering with `inner`: the status, headers and body of
    /// its answer to `request`.
    pub(super) async fn through<L, F>(
        layer: L,
        inner: impl Fn(Request) -> F + Clone + Send + Sync + 'static,
        request: Request,
    ) -> (http::StatusCode, http::HeaderMap, Bytes)
    where
        F: Future<Output = Response> + Send + 'static,
        L: Layer<BoxCloneSyncService<Request, Response, Infallible>>,
        L::Service: Service<Request, Response = Response, Error = Infallible>,
    {
        let inner = tower::service_fn(move |request| {
            let answer = inner(request);
            async move { Ok(answer.await) }
        });
        let response = layer
            .layer(BoxCloneSyncService::new(inner))
            .oneshot(request)
            .await
            .unwrap();
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        (parts.status, parts.headers, bytes)
    }

    #[tokio::test]
    async fn the_streamable_http_service_has_fusions_layers() {
        let service = Server::new("layered", "1.0.0").streamable_http_service();
        let ended = http::Request::delete("/anywhere")
            .header("host", "localhost")
            .header("mcp-session-id", "gone")
            .body(String::new())
            .unwrap();
        let response = service.oneshot(ended).await.unwrap();
        assert_eq!(response.status(), http::StatusCode::NOT_FOUND);
        assert_eq!(
            response.headers()[http::header::CONTENT_TYPE],
            "application/json"
        );
    }
}
