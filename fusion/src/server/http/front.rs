//! The MCP route's front: fusion's tower layers around rmcp's Streamable HTTP service,
//! assembled here for every entry point ([`HttpServer::serve`](super::HttpServer::serve),
//! [`into_router`](super::HttpServer::into_router),
//! [`into_service`](super::HttpServer::into_service),
//! [`Server::streamable_http_service`](crate::server::Server::streamable_http_service)).
//!
//! A request passes, outermost first (after the application's own layers):
//!
//! 1. [`gate::known_sessions`]: 404 with a JSON-RPC error for a session that is not open, or is
//!    another caller's;
//! 2. [`body::read_body`]: a POST body read whole under the size limit and the read timeout
//!    (413, 408);
//! 3. [`removed::removed_initialize`]: 404 with JSON-RPC `-32601` for an `initialize` that says
//!    it is a request of MCP 2026-07-28, which removed it (no session is opened), and the
//!    message of rmcp's answer to such a `ping`;
//! 4. [`gate::session_caps`]: an `initialize` reserves its session's slot under the server's and
//!    the caller's caps (503 at either), handed to the session store in the request's
//!    extensions;
//! 5. [`statuses::rmcp_statuses`]: 204 for an ended session, the JSON-RPC error for a body rmcp
//!    cannot read;
//! 6. [`step_up::insufficient_scope`], with
//!    [`Server::insufficient_scope_challenge`](crate::server::Server::insufficient_scope_challenge):
//!    a `tools/call` request lacking a scope goes on to rmcp marked, and the 403
//!    `insufficient_scope` challenge replaces rmcp's response when rmcp accepted the call; the
//!    last check, so that every other refusal answers first;
//! 6. [`echoes::bounded_echoes`]: rmcp's refusals of a request's headers (400) with the header
//!    values they quote cut to a bounded length;
//!
//! and then rmcp's service, which checks `Host` and `Origin`, `Accept` and `Content-Type`,
//! parses the body itself, checks the protocol version and the session, and serves the session.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::IntoResponse;
use rmcp::transport::StreamableHttpService;
use tower::ServiceBuilder;

use super::body::{self, BodyLimits};
use super::echoes;
use super::gate::{self, Gate};
use super::removed;
use super::sessions::CappedSessions;
use super::statuses;
use super::step_up::{self, StepUp};
use crate::server::Server;

/// The MCP route: `mcp` behind fusion's layers, at `path`, or at every path when `None`.
pub(super) fn route(
    mcp: StreamableHttpService<Server, CappedSessions>,
    gate: Gate,
    limits: BodyLimits,
    step_up: Option<StepUp>,
    path: Option<&str>,
) -> Router {
    let mcp = Arc::new(mcp);
    let service = ServiceBuilder::new()
        .layer(from_fn_with_state(gate.clone(), gate::known_sessions))
        .layer(from_fn_with_state(limits, body::read_body))
        .layer(from_fn(removed::removed_initialize))
        .layer(from_fn_with_state(gate, gate::session_caps))
        .layer(from_fn(statuses::rmcp_statuses))
        .option_layer(step_up.map(|state| from_fn_with_state(state, step_up::insufficient_scope)))
        .layer(from_fn(echoes::bounded_echoes))
        // rmcp's service behind an `Arc`: each layer in front clones the service it wraps for
        // every request, and cloning rmcp's copies its whole configuration (allowed hosts and
        // origins).
        .service(tower::service_fn(move |request| {
            let mcp = Arc::clone(&mcp);
            async move { Ok::<_, Infallible>(mcp.handle(request).await.into_response()) }
        }));
    match path {
        Some(path) => Router::new().route_service(path, service),
        None => Router::new().fallback_service(service),
    }
}
