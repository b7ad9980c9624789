//! Serving over MCP Streamable HTTP (feature `http`): [`Server::serve_http`] and
//! [`Server::http`] with safe defaults, [`HttpServer::into_service`] to nest in an axum app of
//! your own, or rmcp's bare service ([`Server::streamable_http_service`]) without fusion's
//! hardening.
//!
#![doc = include_str!("../../docs/http.md")]

mod answer;
mod body;
mod config;
mod front;
mod gate;

/// The deployment guide: replicas behind a load balancer (sessions and stickiness, shared rate
/// limits in Redis, trusted proxies, failure modes), as `scripts/replicas.sh` runs them.
#[doc = include_str!("../../docs/deployment.md")]
pub mod deployment {}
mod serve;
mod sessions;
mod statuses;
mod trim;

use std::io;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
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

/// The tower service [`Server::streamable_http_service`] returns: rmcp's, with sessions kept in
/// memory without a cap.
pub type HttpService = rmcp::transport::StreamableHttpService<Server, LocalSessionManager>;

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

    /// rmcp's bare tower service speaking MCP Streamable HTTP, with rmcp's default
    /// configuration (sessions kept in memory, only loopback `Host`s accepted). To mount fusion
    /// in an axum app, nest [`HttpServer::into_service`] instead: this service lacks all of
    /// fusion's HTTP hardening.
    ///
    /// Mounting it, you own: a cap on live sessions, overall and per caller (each costs about
    /// 50 KB; else `initialize` floods grow memory without bound); binding each session to the
    /// caller that opened it (else a leaked `Mcp-Session-Id` lets another caller post into the
    /// session and read its events); `Origin` validation (the MCP specification requires it:
    /// Transports, Streamable HTTP, "Security Warning"); a body read timeout, and JSON-RPC
    /// answers to a body over the size limit or not readable as a message (rmcp answers 413
    /// and 415 in plain text); 404 with a JSON-RPC error for an ended session and 204 for a `DELETE`
    /// (rmcp answers plain text, and 202, which the Python SDK logs as a failed termination);
    /// and, per connection, `TCP_NODELAY` (else every response waits about 40 ms for a delayed
    /// ACK), a header read timeout, a cap on open connections and the
    /// [`ClientAddr`](crate::auth::ClientAddr) extension. The heap is never trimmed after
    /// sessions close ([`HttpServer::release_memory`]).
    pub fn streamable_http_service(self) -> HttpService {
        self.streamable_http_service_with(StreamableHttpServerConfig::default())
    }

    /// [`Server::streamable_http_service`] with a configuration: allowed hosts and origins,
    /// JSON responses, keep-alive, a cancellation token for shutdown. It lacks the same
    /// hardening: mount [`HttpServer::into_service`] instead.
    pub fn streamable_http_service_with(self, config: StreamableHttpServerConfig) -> HttpService {
        self.log_breaking_deltas();
        rmcp::transport::StreamableHttpService::new(
            move || Ok(self.for_new_session()),
            Arc::new(LocalSessionManager::default()),
            config,
        )
    }
}
