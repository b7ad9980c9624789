//! [`HttpServer`]: the builder of a hardened Streamable HTTP server, its defaults, and the
//! axum router it assembles.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::response::IntoResponse;
use axum::routing::Route;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower_layer::Layer;
use tower_service::Service;

use super::body::BodyLimits;
use super::front;
use super::gate::Gate;
use super::sessions::CappedSessions;
use crate::server::Server;

/// The default [`HttpServer::path`] of the MCP endpoint: `/mcp`.
pub const DEFAULT_PATH: &str = "/mcp";
/// The default [`HttpServer::max_sessions`]: 1,000 live sessions (each about 50 KB while it
/// lives, so about 50 MB at the cap).
pub const DEFAULT_MAX_SESSIONS: usize = 1_000;
/// The default [`HttpServer::max_sessions_per_caller`]: 100 live sessions per authenticated
/// caller, a tenth of [`DEFAULT_MAX_SESSIONS`].
pub const DEFAULT_MAX_SESSIONS_PER_CALLER: usize = 100;
/// The default [`HttpServer::session_idle_timeout`]: 5 minutes, rmcp's own.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// The default [`HttpServer::max_connections`]: 10,000 open connections, ten for each session
/// of [`DEFAULT_MAX_SESSIONS`] (a session's event stream and its requests each hold one).
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
/// The default [`HttpServer::header_read_timeout`]: 10 seconds.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The default [`HttpServer::body_read_timeout`]: 30 seconds.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The default [`HttpServer::max_body_bytes`]: 4 MiB, rmcp's own and the default
/// [`Server::max_argument_bytes`].
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The `Host`s accepted by default: loopback only, rmcp's own default against DNS rebinding.
pub const DEFAULT_ALLOWED_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];
/// The `Origin`s accepted by default: pages served from loopback, on any port (an MCP inspector
/// on `http://localhost:6274`). A request without `Origin` (any non-browser client) passes.
pub const DEFAULT_ALLOWED_ORIGINS: &[&str] = &[
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// How long a client refused at the session cap is told to wait, at most.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

type Wrap = Box<dyn FnOnce(Router) -> Router + Send>;
pub(super) type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Who runs the HTTP server in front of the router [`HttpServer::build`] assembles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ServedBy {
    /// fusion's connection loop ([`HttpServer::serve_on`]): fusion is the process's server.
    Fusion,
    /// The application's own server ([`HttpServer::into_router`], [`HttpServer::into_service`]).
    Application,
}

/// A Streamable HTTP server for a [`Server`], hardened by default: built by [`Server::http`],
/// configured with consuming builder methods, run by [`HttpServer::serve`] or
/// [`HttpServer::serve_on`], or mounted in your own axum app with
/// [`HttpServer::into_service`].
///
/// | setting | default | beyond it |
/// |---|---|---|
/// | [`path`](HttpServer::path) | [`DEFAULT_PATH`] (`/mcp`) | other paths: your routes, else 404 |
/// | [`max_sessions`](HttpServer::max_sessions) | [`DEFAULT_MAX_SESSIONS`] (1,000) | `initialize` gets HTTP 503, `Retry-After`, JSON-RPC `-32603` |
/// | [`max_sessions_per_caller`](HttpServer::max_sessions_per_caller) | [`DEFAULT_MAX_SESSIONS_PER_CALLER`] (100) | the same, for that caller |
/// | [`session_idle_timeout`](HttpServer::session_idle_timeout) | 5 min | the session ends; its requests get HTTP 404 (the client starts a new one) |
/// | [`max_connections`](HttpServer::max_connections) | [`DEFAULT_MAX_CONNECTIONS`] (10,000) | none accepted until one closes: a new client's connect succeeds (the listen backlog) and its request waits |
/// | [`header_read_timeout`](HttpServer::header_read_timeout) | 10 s | the connection is closed |
/// | [`body_read_timeout`](HttpServer::body_read_timeout) | 30 s | HTTP 408, connection closed |
/// | [`max_body_bytes`](HttpServer::max_body_bytes) | 4 MiB | HTTP 413, connection closed |
/// | [`allowed_hosts`](HttpServer::allowed_hosts) | loopback ([`DEFAULT_ALLOWED_HOSTS`]) | HTTP 403 |
/// | [`allowed_origins`](HttpServer::allowed_origins) | loopback pages ([`DEFAULT_ALLOWED_ORIGINS`]); no `Origin`: allowed | HTTP 403 |
/// | [`json_response`](HttpServer::json_response) | off (answers as `text/event-stream`) | — |
/// | [`release_memory`](HttpServer::release_memory) | on (Linux with glibc) under `serve`; off under `into_router` and `into_service` | — |
///
/// A body that is not one JSON-RPC request (not JSON, a batch, params that do not fit the
/// method) gets HTTP 400 with the JSON-RPC error stdio would give, carrying the request's id
/// when one can be read. See the [HTTP guide](crate::server::http) for the reasons.
///
/// ```no_run
/// # async fn demo(server: fusion::server::Server) -> std::io::Result<()> {
/// use std::time::Duration;
///
/// server
///     .http()
///     .max_sessions(200)
///     .session_idle_timeout(Duration::from_secs(120))
///     .allowed_hosts(["mcp.example.com"])
///     .allowed_origins(["https://app.example.com"])
///     // Cancelled from elsewhere (a signal handler, an admin endpoint) to stop serving.
///     .graceful_shutdown(fusion::CancellationToken::new().cancelled_owned())
///     .serve("0.0.0.0:8080")
///     .await
/// # }
/// ```
#[must_use = "an HttpServer does nothing until `.serve(..)`, `.serve_on(..)`, `.into_service()` or `.into_router()`"]
pub struct HttpServer {
    server: Server,
    pub(super) path: String,
    max_sessions: usize,
    max_sessions_per_caller: usize,
    session_idle_timeout: Duration,
    pub(super) max_connections: usize,
    pub(super) header_read_timeout: Duration,
    body_read_timeout: Duration,
    max_body_bytes: usize,
    /// `None`: any host.
    allowed_hosts: Option<Vec<String>>,
    /// `None`: as `rmcp` says (any origin, unless [`HttpServer::into_service_with`] set it).
    allowed_origins: Option<Vec<String>>,
    json_response: bool,
    /// `None`: trim when fusion runs the server ([`ServedBy::Fusion`]), not when mounted.
    release_memory: Option<bool>,
    stateless: bool,
    wraps: Vec<Wrap>,
    routes: Router,
    pub(super) shutdown: Option<Shutdown>,
    /// Serve MCP at every path, not only `path` ([`HttpServer::into_service`]).
    any_path: bool,
    /// rmcp's settings fusion has none of its own for (keep-alive, retry, the shutdown token).
    rmcp: StreamableHttpServerConfig,
}

impl HttpServer {
    pub(super) fn new(server: Server) -> HttpServer {
        HttpServer {
            server,
            path: DEFAULT_PATH.to_owned(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_sessions_per_caller: DEFAULT_MAX_SESSIONS_PER_CALLER,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            allowed_hosts: Some(to_strings(DEFAULT_ALLOWED_HOSTS)),
            allowed_origins: Some(to_strings(DEFAULT_ALLOWED_ORIGINS)),
            json_response: false,
            release_memory: None,
            stateless: false,
            wraps: Vec::new(),
            routes: Router::new(),
            shutdown: None,
            any_path: false,
            rmcp: StreamableHttpServerConfig::default(),
        }
    }

    /// [`HttpServer::into_service`] with the settings of rmcp's `config` (allowed hosts and
    /// origins, JSON responses, sessions or none, the body limit, keep-alive, the cancellation
    /// token that ends every session); fusion's defaults for the rest.
    pub(super) fn into_service_with(mut self, config: StreamableHttpServerConfig) -> Router {
        if config.session_store.is_some() {
            tracing::warn!(target: "fusion::server", "a StreamableHttpServerConfig::session_store is not used: fusion's session store keeps sessions in memory");
        }
        self.allowed_hosts = Some(config.allowed_hosts.clone()).filter(|hosts| !hosts.is_empty());
        // `config` keeps its own origin check.
        self.allowed_origins = None;
        self.json_response = config.json_response;
        self.stateless = !config.legacy_session_mode;
        self.max_body_bytes = config.max_request_body_bytes;
        self.any_path = true;
        let cancel = config.cancellation_token.clone();
        self.rmcp = config;
        self.build(cancel, ServedBy::Application)
    }

    /// Serves MCP at `path` (default `/mcp`).
    ///
    /// # Panics
    /// When `path` does not start with `/` (axum's rule for routes).
    #[track_caller]
    pub fn path(mut self, path: impl Into<String>) -> HttpServer {
        let path = path.into();
        assert!(
            path.starts_with('/'),
            "fusion::server::HttpServer::path: `{path}` must start with `/`"
        );
        self.path = path;
        self
    }

    /// At most `sessions` MCP sessions live at once (default [`DEFAULT_MAX_SESSIONS`]). An
    /// `initialize` beyond it is refused with HTTP 503, a `Retry-After` header (whole seconds)
    /// and a JSON-RPC `-32603` error carrying the request's id; live sessions are never evicted
    /// to make room (a flood of `initialize` would otherwise end the conversations of working
    /// clients). A session frees its slot when the client ends it (HTTP `DELETE`), when it
    /// sits idle past [`HttpServer::session_idle_timeout`], or at shutdown.
    ///
    /// # Panics
    /// When `sessions` is 0: serve without sessions with [`HttpServer::stateless`] instead.
    #[track_caller]
    pub fn max_sessions(mut self, sessions: usize) -> HttpServer {
        assert!(
            sessions > 0,
            "fusion::server::HttpServer::max_sessions: 0 sessions refuses every client; use \
             `.stateless(true)` to serve without sessions"
        );
        self.max_sessions = sessions;
        self
    }

    /// At most `sessions` live sessions opened by one authenticated caller (the issuer and
    /// subject of the [`Principal`](crate::auth::Principal) an auth layer puts on the request;
    /// default [`DEFAULT_MAX_SESSIONS_PER_CALLER`]), so that one caller, with one valid token,
    /// cannot take every slot of [`HttpServer::max_sessions`]. Its `initialize` beyond it is
    /// refused like one at the server's cap (HTTP 503, `Retry-After`). Requests without a
    /// principal are held to the server's cap only. Both caps count a session from the moment
    /// its `initialize` arrives, so parallel `initialize`s cannot exceed them.
    ///
    /// # Panics
    /// When `sessions` is 0.
    #[track_caller]
    pub fn max_sessions_per_caller(mut self, sessions: usize) -> HttpServer {
        assert!(
            sessions > 0,
            "fusion::server::HttpServer::max_sessions_per_caller: 0 sessions refuses every \
             authenticated client"
        );
        self.max_sessions_per_caller = sessions;
        self
    }

    /// Ends a session after `timeout` without a message from its client or its server (default
    /// 5 minutes, [`DEFAULT_SESSION_IDLE_TIMEOUT`]). Its later requests get HTTP 404, on which
    /// an MCP client starts a new session (MCP specification, Transports, Streamable HTTP,
    /// "Session Management"). An open event stream (HTTP GET) with no events does not count as
    /// traffic.
    pub fn session_idle_timeout(mut self, timeout: Duration) -> HttpServer {
        self.session_idle_timeout = timeout;
        self
    }

    /// At most `connections` TCP connections open at once (default
    /// [`DEFAULT_MAX_CONNECTIONS`]), each holding a file descriptor, so that clients opening
    /// connections and leaving them idle cannot exhaust the process's descriptors. At the cap the
    /// server stops accepting until a connection closes: the kernel's listen backlog holds new
    /// connections (a client's connect succeeds and its request is answered once a slot frees;
    /// past the backlog, connection attempts wait on the client's TCP retries or time out).
    /// Refusing instead (accept, then close) would cost the same descriptor and give the client a
    /// reset, which HTTP clients retry at once. Idle connections free their slot after the
    /// [header read timeout](HttpServer::header_read_timeout). Keep the cap below the process's
    /// open-file limit (`ulimit -n`, systemd's `LimitNOFILE=`), or that limit binds first: an
    /// accept then fails with "too many open files", is logged, and is retried a second later.
    /// Applies to [`HttpServer::serve`] and [`HttpServer::serve_on`]; behind
    /// [`HttpServer::into_router`], cap connections in your own server.
    ///
    /// # Panics
    /// When `connections` is 0.
    #[track_caller]
    pub fn max_connections(mut self, connections: usize) -> HttpServer {
        assert!(
            connections > 0,
            "fusion::server::HttpServer::max_connections: 0 connections serves nobody"
        );
        self.max_connections = connections;
        self
    }

    /// Closes a connection whose request head (request line and headers) has not fully arrived
    /// `timeout` after the server started waiting for it (default 10 s,
    /// [`DEFAULT_HEADER_READ_TIMEOUT`]). That wait starts when the connection opens and again
    /// after each response, so it also bounds idle keep-alive connections. Applies to
    /// [`HttpServer::serve`] and [`HttpServer::serve_on`]; behind
    /// [`HttpServer::into_router`], set it on your own HTTP server.
    pub fn header_read_timeout(mut self, timeout: Duration) -> HttpServer {
        self.header_read_timeout = timeout;
        self
    }

    /// Answers HTTP 408 and closes the connection when a POST body has not fully arrived
    /// `timeout` after its headers (default 30 s, [`DEFAULT_BODY_READ_TIMEOUT`]).
    pub fn body_read_timeout(mut self, timeout: Duration) -> HttpServer {
        self.body_read_timeout = timeout;
        self
    }

    /// Answers HTTP 413 and closes the connection when a POST body exceeds `bytes` (default
    /// 4 MiB, [`DEFAULT_MAX_BODY_BYTES`]), without reading past the limit (at once when
    /// `Content-Length` declares more). The JSON-RPC error in the body carries the request's id
    /// when it appears before the limit.
    pub fn max_body_bytes(mut self, bytes: usize) -> HttpServer {
        self.max_body_bytes = bytes;
        self
    }

    /// Accepts requests whose `Host` is one of `hosts` (names or `name:port`; default
    /// [`DEFAULT_ALLOWED_HOSTS`], loopback only), others get HTTP 403. A server reachable under
    /// a public name must list it. The check stops DNS rebinding (MCP specification,
    /// Transports, Streamable HTTP, "Security Warning").
    pub fn allowed_hosts(
        mut self,
        hosts: impl IntoIterator<Item = impl Into<String>>,
    ) -> HttpServer {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Accepts any `Host` (behind a proxy that checks it, say).
    pub fn any_host(mut self) -> HttpServer {
        self.allowed_hosts = None;
        self
    }

    /// Accepts requests whose `Origin` header, when present, is one of `origins` (with scheme:
    /// `https://app.example.com`, `http://localhost:*` for any port, `null`); others get HTTP
    /// 403. Requests without `Origin` (clients other than browsers) pass. An empty list refuses
    /// every request from a browser page. Default: [`DEFAULT_ALLOWED_ORIGINS`] (pages served
    /// from loopback). The MCP specification requires the check (Transports, Streamable HTTP,
    /// "Security Warning": servers MUST validate the `Origin` header).
    pub fn allowed_origins(
        mut self,
        origins: impl IntoIterator<Item = impl Into<String>>,
    ) -> HttpServer {
        self.allowed_origins = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Accepts any `Origin`: every web page a user visits may then call this server through
    /// their browser. Only for servers that authenticate every request otherwise.
    pub fn any_origin(mut self) -> HttpServer {
        self.allowed_origins = None;
        self
    }

    /// Answers a request that yields one response with `Content-Type: application/json`
    /// instead of an event stream, when the handler sends nothing before it (default off).
    /// rmcp applies it to sessionless requests ([`HttpServer::stateless`]).
    pub fn json_response(mut self, enabled: bool) -> HttpServer {
        self.json_response = enabled;
        self
    }

    /// Whether the session store gives the memory of closed sessions back to the operating
    /// system. Default: on where fusion runs the process's HTTP server ([`HttpServer::serve`],
    /// [`HttpServer::serve_on`], [`Server::serve_http`]); off for a router or service your
    /// application serves ([`HttpServer::into_router`], [`HttpServer::into_service`]), whose
    /// allocator is the application's to manage: `.release_memory(true)` turns it on there.
    ///
    /// On Linux with glibc a trim is `malloc_trim(0)` on Tokio's blocking pool, after every 64
    /// closed sessions and when the last one closes, one at a time, each at least 200 ms after
    /// it was asked for, and after a trim that took `t` no sooner than `9 x t` later. Without
    /// it glibc keeps the memory for reuse (a burst of 10,000 `initialize` requests against the
    /// default cap left 70 to 110 MB where the server idles at 10 MB). A trim walks the whole
    /// process heap, each arena under its lock: about 5 ms for 100 MB of fragmented heap and
    /// 100 ms per GB, during which a thread needing a locked arena waits. Under another
    /// allocator (a `#[global_allocator]` such as jemalloc or mimalloc, or musl) it does nothing
    /// either way. See the [HTTP guide](crate::server::http), "Memory".
    pub fn release_memory(mut self, enabled: bool) -> HttpServer {
        self.release_memory = Some(enabled);
        self
    }

    /// Serves without sessions (default off): every request stands alone, no `Mcp-Session-Id`
    /// is issued, and the session cap does not apply. Server-to-client requests and
    /// notifications outside a request's own stream are then unavailable.
    pub fn stateless(mut self, enabled: bool) -> HttpServer {
        self.stateless = enabled;
        self
    }

    /// Wraps the MCP route (only it, not [`HttpServer::routes`]) in a tower layer: a bearer
    /// token check, a rate limit, a trace. Layers apply in call order, the last one outermost,
    /// and run after the connection limits but before the body is read. The bounds are axum's
    /// [`Router::layer`].
    pub fn layer<L>(mut self, layer: L) -> HttpServer
    where
        L: Layer<Route> + Clone + Send + Sync + 'static,
        L::Service: Service<Request> + Clone + Send + Sync + 'static,
        <L::Service as Service<Request>>::Response: IntoResponse + 'static,
        <L::Service as Service<Request>>::Error: Into<std::convert::Infallible> + 'static,
        <L::Service as Service<Request>>::Future: Send + 'static,
    {
        self.wraps.push(Box::new(move |router| router.layer(layer)));
        self
    }

    /// Serves `routes` next to the MCP route, outside its layers: a health check, the OAuth
    /// protected resource metadata (RFC 9728, `/.well-known/oauth-protected-resource`).
    /// Several calls merge.
    ///
    /// # Panics
    /// As axum's [`Router::merge`] when a route overlaps another (the MCP path included), when
    /// the server starts.
    pub fn routes(mut self, routes: Router) -> HttpServer {
        self.routes = self.routes.merge(routes);
        self
    }

    /// Stops [`HttpServer::serve`] / [`HttpServer::serve_on`] when `signal` completes: no new
    /// connections, sessions ended (their open event streams close), then the call returns once
    /// every connection has finished its response in progress. A
    /// [`CancellationToken`](crate::CancellationToken) works as
    /// `token.cancelled_owned()`.
    pub fn graceful_shutdown(
        mut self,
        signal: impl Future<Output = ()> + Send + 'static,
    ) -> HttpServer {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    /// The MCP route (at [`HttpServer::path`]) and your [routes](HttpServer::routes) as an
    /// axum [`Router`], to serve with your own HTTP server. To put the endpoint inside an axum
    /// app of your own, nest [`HttpServer::into_service`] instead (the same router, answering
    /// at the path it is nested under).
    ///
    /// It keeps the request-level hardening: the session caps and idle timeout, sessions bound
    /// to the caller that opened them, the body limit and body timeout, `Host` and `Origin`
    /// checks, JSON-RPC answers to malformed bodies, 404 for ended sessions and 204 for a
    /// `DELETE`. It lacks what [`HttpServer::serve`] does per connection, which your server
    /// then owns: `TCP_NODELAY` on each accepted socket (else each response waits about 40 ms
    /// for a delayed ACK), a header read timeout, a cap on open connections, graceful shutdown,
    /// and the client's address as a [`ClientAddr`](crate::auth::ClientAddr) request extension
    /// (the rate-limit key of callers without a token; without it they are keyed by their
    /// session, which a client renews with each `initialize`, and stateless requests share one
    /// bucket). The heap is not trimmed after sessions close unless
    /// [`release_memory(true)`](HttpServer::release_memory).
    pub fn into_router(self) -> Router {
        self.build(CancellationToken::new(), ServedBy::Application)
    }

    /// MCP as a tower service answering at whatever path it is mounted (every path reaches
    /// it): the way to mount fusion in an axum app of your own, behind your layers, as
    /// `app.nest_service("/mcp", server.http().layer(auth).into_service())`.
    ///
    /// It keeps what [`HttpServer::into_router`] keeps: the session caps, sessions bound to the
    /// caller that opened them (when an auth layer, here or around the service, puts a
    /// [`Principal`](crate::auth::Principal) on the request), the body limit and timeout,
    /// `Host` and `Origin` checks (list your public names in [`HttpServer::allowed_hosts`] and
    /// your web app's origin in [`HttpServer::allowed_origins`]), the JSON-RPC answers to
    /// malformed bodies and the session status codes. It ignores [`HttpServer::path`]. It lacks,
    /// as `into_router` does, the per-connection settings of [`HttpServer::serve`]
    /// (`TCP_NODELAY`, the header read timeout, the connection cap, graceful shutdown, the
    /// [`ClientAddr`](crate::auth::ClientAddr) extension), which your server owns, and trims
    /// the heap only with [`release_memory(true)`](HttpServer::release_memory).
    ///
    /// Your layers around it (a bearer check such as `fusion::auth::BearerAuth`, CORS, request
    /// ids) run first, and what they put on the request (headers, extensions such as the
    /// `Principal`) reaches each call through
    /// [`RequestContext::http_parts`](crate::RequestContext::http_parts).
    ///
    /// ```
    /// use axum::routing::get;
    /// # fn demo(server: fusion::server::Server) {
    /// let mcp = server
    ///     .http()
    ///     .allowed_hosts(["app.example.com", "localhost"])
    ///     .allowed_origins(["https://app.example.com"])
    ///     .into_service();
    /// let app: axum::Router = axum::Router::new()
    ///     .route("/healthz", get(|| async { "ok" }))
    ///     .nest_service("/mcp", mcp);
    /// # }
    /// ```
    pub fn into_service(mut self) -> Router {
        self.any_path = true;
        self.build(CancellationToken::new(), ServedBy::Application)
    }

    /// Whether the session store trims the heap: as set with [`HttpServer::release_memory`],
    /// else only where fusion runs the process's server (see there why).
    fn releases_memory(&self, served_by: ServedBy) -> bool {
        self.release_memory.unwrap_or(served_by == ServedBy::Fusion)
    }

    /// Assembles the router for a server run by `served_by`; `cancel` ends every session (and
    /// its event streams).
    pub(super) fn build(self, cancel: CancellationToken, served_by: ServedBy) -> Router {
        let release_memory = self.releases_memory(served_by);
        let mut config = self
            .rmcp
            .with_legacy_session_mode(!self.stateless)
            .with_json_response(self.json_response)
            .with_cancellation_token(cancel);
        // The body layer reads bodies under its own limit; rmcp's must not be the smaller one.
        config.max_request_body_bytes = self.max_body_bytes.max(1);
        config = match self.allowed_hosts {
            Some(hosts) => config.with_allowed_hosts(hosts),
            None => config.disable_allowed_hosts(),
        };
        if let Some(origins) = self.allowed_origins {
            config = config
                .with_allowed_origins(origins)
                .enforce_origin_validation();
        }
        let sessions = Arc::new(CappedSessions::new(
            self.max_sessions,
            self.session_idle_timeout,
            release_memory,
        ));
        self.server.log_breaking_deltas();
        let server = self.server;
        let step_up = server.step_up();
        let mcp = StreamableHttpService::new(
            move || Ok(server.for_new_session()),
            Arc::clone(&sessions),
            config,
        );
        let gate = Gate {
            sessions,
            max_sessions_per_caller: self.max_sessions_per_caller,
            retry_after: self.session_idle_timeout.min(MAX_RETRY_AFTER),
            stateless: self.stateless,
        };
        let limits = BodyLimits {
            max_bytes: self.max_body_bytes,
            timeout: self.body_read_timeout,
        };
        let path = (!self.any_path).then_some(self.path.as_str());
        let mut router = front::route(mcp, gate, limits, step_up, path);
        for wrap in self.wraps {
            router = wrap(router);
        }
        router.merge(self.routes)
    }
}

impl fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpServer")
            .field("server", &self.server)
            .field("path", &self.path)
            .field("max_sessions", &self.max_sessions)
            .field("max_sessions_per_caller", &self.max_sessions_per_caller)
            .field("session_idle_timeout", &self.session_idle_timeout)
            .field("max_connections", &self.max_connections)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("json_response", &self.json_response)
            .field("release_memory", &self.release_memory)
            .field("stateless", &self.stateless)
            .field("layers", &self.wraps.len())
            .finish_non_exhaustive()
    }
}

fn to_strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|&item| item.to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http() -> HttpServer {
        Server::new("trims", "1.0.0").http()
    }

    #[test]
    fn the_heap_is_trimmed_by_default_only_where_fusion_runs_the_server() {
        assert!(http().releases_memory(ServedBy::Fusion));
        assert!(!http().releases_memory(ServedBy::Application));
    }

    #[test]
    fn release_memory_overrides_the_default_either_way() {
        let on = http().release_memory(true);
        assert!(on.releases_memory(ServedBy::Application));
        assert!(on.releases_memory(ServedBy::Fusion));
        let off = http().release_memory(false);
        assert!(!off.releases_memory(ServedBy::Fusion));
        assert!(!off.releases_memory(ServedBy::Application));
    }
}
