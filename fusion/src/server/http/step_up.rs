//! Step-up authorization: with [`Server::insufficient_scope_challenge`], a `tools/call` whose
//! action needs a scope the caller's token lacks is answered HTTP 403 with the
//! `insufficient_scope` challenge (RFC 6750 section 3.1; MCP authorization, "Scope Challenge
//! Handling"), so that a client can ask the user for the scope and retry. The call goes the way
//! the call path routes it ([`Catalog::get`], the tool's runtime), and the scopes are the ones
//! the guards' scope check reads. The challenge is the last check: rmcp first checks the
//! request (`Host`, `Origin`, headers, body, protocol version, session), and the challenge
//! replaces its response only when it accepted the call, before any of that response is sent;
//! the call path runs nothing for a call so marked.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};
use rmcp::service::{RequestContext as RmcpContext, RoleServer};
use serde_json::{Map, Value};

use super::body;
use super::next::Next;
use crate::auth::{Principal, is_scope_token, quoted};
use crate::server::{Server, malformed};

/// What the step-up layer needs: the server (its routes and guards), and the URL the challenge
/// names as `resource_metadata`.
#[derive(Clone)]
pub(super) struct StepUp {
    pub(super) server: Server,
    pub(super) metadata_url: Arc<str>,
}

impl Server {
    /// Answers a `tools/call` over Streamable HTTP whose action needs a scope the caller's
    /// [`Principal`] lacks with HTTP 403 and the challenge
    /// `Bearer error="insufficient_scope", scope="…", resource_metadata="…",
    /// error_description="…"` (RFC 6750 section 3.1; MCP authorization, "Scope Challenge
    /// Handling"), for clients that step up: they ask the user to grant the scope and retry.
    /// `scope` names the scopes the call needs, then the ones the token already holds, so that
    /// re-authorizing with it loses nothing; `resource_metadata_url` is where the protected
    /// resource metadata is served (RFC 9728; [`BearerAuth::resource_metadata_url`](crate::auth)
    /// gives it). The response body is empty, as for the bearer layer's 401.
    ///
    /// Only a `tools/call` request (with an `id`) from an authenticated caller is answered this
    /// way, and only once everything else would have let it through: a disallowed `Host` or
    /// `Origin`, an unknown `MCP-Protocol-Version`, a missing or unknown session, a wrong
    /// `Accept` or `Content-Type` or a body that is not one JSON-RPC message keep their own
    /// answers. The scopes are checked before the arguments: a call with invalid arguments
    /// to an action the token lacks a scope for gets the challenge. A request without a
    /// principal reaches the tool and is answered `UNAUTHORIZED` in band; a `tools/call`
    /// notification (no `id`) goes on as without this setting; a JSON-RPC batch is answered
    /// HTTP 400 with JSON-RPC error -32600 (MCP has no batches since 2025-06-18). With
    /// [`Server::hide_unauthorized_actions`], a caller lacking a scope does not see the action
    /// it guards: calling it is calling one that does not exist (`UNKNOWN_ACTION`), never a
    /// 403. Other transports, and servers without this setting, answer a missing scope in band
    /// with the `FORBIDDEN` envelope, which a model can read. Default: off.
    pub fn insufficient_scope_challenge(self, resource_metadata_url: impl Into<String>) -> Server {
        let url: Arc<str> = Arc::from(resource_metadata_url.into());
        self.set(|inner| inner.step_up = Some(url))
    }

    /// Whether the step-up layer answers this `tools/call` with the challenge, in place of the
    /// response rmcp started: the call path then runs nothing (no guard, no action), and what
    /// it returns is never sent.
    pub(in crate::server) fn challenged(context: &RmcpContext<RoleServer>) -> bool {
        (context.extensions.get::<http::request::Parts>())
            .is_some_and(|parts| parts.extensions.get::<Challenged>().is_some())
    }

    /// The layer's state, when the setting is on.
    pub(super) fn step_up(&self) -> Option<StepUp> {
        let metadata_url = Arc::clone(self.inner.step_up.as_ref()?);
        Some(StepUp {
            server: self.clone(),
            metadata_url,
        })
    }

    /// The scopes a call of MCP tool `name` with `arguments` by `caller` needs, when the caller
    /// lacks some; `None` when it lacks none, or the call names no tool or action the caller
    /// can see (the call path answers it). The layer runs before rmcp reads the request, on
    /// its bytes, and must decide before rmcp's response starts (an SSE stream's headers go
    /// out before the handler runs), so it resolves the call itself, the way the call path
    /// does.
    fn scopes_lacking(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        caller: &Principal,
    ) -> Option<Vec<String>> {
        let inner = &self.inner;
        let view = self.view_for(Some(caller));
        let catalog = view.as_ref().map_or(&inner.catalog, |v| &v.catalog);
        let route = &catalog.get(name)?.route;
        // Resolved as the call path resolves it; a call naming no action it may see is the
        // call path's to answer.
        let shown = view.as_ref().map(|view| view.allowed(route.tool));
        let index = inner.registry.route(route, arguments, shown).ok()?;
        let action = inner.registry.tools()[route.tool].compiled.action(index);
        if inner.registry.allows(route.tool, action, Some(caller)) {
            return None;
        }
        let required = inner.registry.required_scopes(route.tool, action);
        Some(required.into_iter().map(str::to_owned).collect())
    }
}

/// Marks a `tools/call` the step-up layer answers with the challenge once rmcp has accepted it:
/// the call path sees it in the request's parts and runs nothing (see [`Server::challenged`]).
#[derive(Clone, Copy, Debug)]
struct Challenged;

/// The layer, the last before rmcp's service: a POST carrying one `tools/call` request (with
/// an `id`) by an authenticated caller lacking a scope its action needs is marked
/// [`Challenged`] and handed to rmcp, which checks `Host` and `Origin`, `Accept` and
/// `Content-Type`, the body, the protocol version and the session; when rmcp accepts it (a 2xx
/// response, not yet sent), the challenge replaces that response. What rmcp refuses keeps
/// rmcp's answer. Everything else goes on unchanged.
pub(super) async fn insufficient_scope(
    State(step_up): State<StepUp>,
    request: Request,
    next: impl Next,
) -> Response {
    if request.method() != Method::POST || request.extensions().get::<Principal>().is_none() {
        return next.run(request).await;
    }
    let (mut parts, bytes) = body::buffered(request).await;
    let challenge = (parts.extensions.get::<Principal>()).and_then(|caller| {
        let required = lacking(&step_up.server, &bytes, caller)?;
        Some(forbidden(&required, caller, &step_up.metadata_url))
    });
    let Some(challenge) = challenge else {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    };
    parts.extensions.insert(Challenged);
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    // What rmcp refuses for its own reasons keeps rmcp's answer.
    if response.status().is_success() {
        challenge
    } else {
        response
    }
}

/// The scopes the `tools/call` request in `bytes` needs and `caller` lacks; `None` for any
/// other message (a notification, a batch, another method) or a call lacking none.
fn lacking(server: &Server, bytes: &[u8], caller: &Principal) -> Option<Vec<String>> {
    let method = malformed::scan_top_level(bytes, "method");
    if method.as_ref().and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let message = serde_json::from_slice::<Value>(bytes).ok()?;
    // A request has an id; a `tools/call` without one is a notification, not challenged.
    message.get("id").filter(|id| !id.is_null())?;
    let params = message.get("params")?;
    let name = params.get("name").and_then(Value::as_str)?;
    let no_arguments = Map::new();
    let arguments = (params.get("arguments").and_then(Value::as_object)).unwrap_or(&no_arguments);
    server.scopes_lacking(name, arguments, caller)
}

/// HTTP 403 with the `insufficient_scope` challenge: the scopes `required`, then the ones
/// `caller` holds (each once, scope tokens only).
fn forbidden(required: &[String], caller: &Principal, metadata_url: &str) -> Response {
    let mut scopes: Vec<&str> = Vec::new();
    for scope in required.iter().chain(caller.scopes()) {
        if is_scope_token(scope) && !scopes.contains(&scope.as_str()) {
            scopes.push(scope);
        }
    }
    // Scope tokens need no escaping; the URL is the deployment's, quoted as any value.
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata={}, \
         error_description=\"The access token lacks a scope this call requires\"",
        scopes.join(" "),
        quoted(metadata_url)
    );
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::FORBIDDEN;
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_quotes_the_metadata_url_and_keeps_only_scope_tokens() {
        let caller = Principal::new("alice").with_scopes(["read", "x\"y"]);
        let response = forbidden(
            &["charge".to_owned()],
            &caller,
            "https://x.example/\"evil\", error=\"x",
        );
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            response.headers()[header::WWW_AUTHENTICATE],
            "Bearer error=\"insufficient_scope\", scope=\"charge read\", \
             resource_metadata=\"https://x.example/\\\"evil\\\", error=\\\"x\", \
             error_description=\"The access token lacks a scope this call requires\""
        );
    }
}
