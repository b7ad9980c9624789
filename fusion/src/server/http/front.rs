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
//! 7. [`echoes::bounded_echoes`]: rmcp's refusals of a request's headers (400) with the header
//!    values they quote cut to a bounded length;
//!
//! and then rmcp's service, which checks `Host` and `Origin`, `Accept` and `Content-Type`,
//! parses the body itself, checks the protocol version and the session, and serves the session.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use rmcp::transport::StreamableHttpService;
use tower::Service;

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
    let front = Front(Arc::new(Layers {
        mcp,
        gate,
        limits,
        step_up,
    }));
    match path {
        Some(path) => Router::new().route_service(path, front),
        None => Router::new().fallback_service(front),
    }
}

/// The layers' states and rmcp's service, shared by every request (cloning the front clones
/// an `Arc`: rmcp's service copies its whole configuration when cloned).
struct Layers {
    mcp: StreamableHttpService<Server, CappedSessions>,
    gate: Gate,
    limits: BodyLimits,
    step_up: Option<StepUp>,
}

/// The front as one tower service: each request runs the layers' functions in the order of
/// the module's docs, nested in one future.
#[derive(Clone)]
struct Front(Arc<Layers>);

impl Service<Request> for Front {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // rmcp's service is always ready (its `poll_ready` says so), and so is every layer.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let layers = Arc::clone(&self.0);
        Box::pin(async move { Ok(layers.serve(request).await) })
    }
}

impl Layers {
    /// `request` through every layer, then rmcp's service.
    async fn serve(&self, request: Request) -> Response {
        let gate = || State(self.gate.clone());
        gate::known_sessions(gate(), request, |request| {
            body::read_body(State(self.limits), request, |request| {
                removed::removed_initialize(request, |request| {
                    gate::session_caps(gate(), request, |request| {
                        statuses::rmcp_statuses(request, |request| self.step_up(request))
                    })
                })
            })
        })
        .await
    }

    /// The step-up layer when the server has it, then the echo layer and rmcp's service.
    async fn step_up(&self, request: Request) -> Response {
        let rest = |request| echoes::bounded_echoes(request, |request| self.rmcp(request));
        match &self.step_up {
            Some(state) => step_up::insufficient_scope(State(state.clone()), request, rest).await,
            None => rest(request).await,
        }
    }

    /// rmcp's service, its future boxed: it is large (6 KB), and every layer's future holds
    /// the one after it, so unboxed it would be copied once per layer.
    async fn rmcp(&self, request: Request) -> Response {
        Box::pin(self.mcp.handle(request)).await.into_response()
    }
}
