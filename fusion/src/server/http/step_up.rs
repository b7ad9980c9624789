//! Step-up authorization: with [`Server::insufficient_scope_challenge`], a `tools/call` whose
//! action needs a scope the caller's token lacks is answered HTTP 403 with the
//! `insufficient_scope` challenge (RFC 6750 section 3.1; MCP authorization, "Scope Challenge
//! Handling"), before rmcp starts a response, so that a client can ask the user for the scope
//! and retry. The call goes the way the call path routes it ([`Catalog::get`], the tool's
//! runtime), and the scopes are the ones the guards' scope check reads.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Map, Value};

use crate::auth::{Principal, is_scope_token};
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
    /// Only a single `tools/call` from an authenticated caller is answered this way: a request
    /// without a principal reaches the tool and is answered `UNAUTHORIZED` in band, a JSON-RPC
    /// batch in band, and a call of a tool or action hidden by
    /// [`Server::hide_unauthorized_actions`] as one that does not exist. Other transports,
    /// and servers without this setting, answer a missing scope in band with the `FORBIDDEN`
    /// envelope, which a model can read. Default: off.
    pub fn insufficient_scope_challenge(self, resource_metadata_url: impl Into<String>) -> Server {
        let url: Arc<str> = Arc::from(resource_metadata_url.into());
        self.set(|inner| inner.step_up = Some(url))
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
    /// can see (the call path answers it).
    fn scopes_lacking(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        caller: &Principal,
    ) -> Option<Vec<String>> {
        let inner = &self.inner;
        let view = (inner.visible).view(&inner.registry, inner.exposition, Some(caller));
        let catalog = view.as_ref().map_or(&inner.catalog, |v| &v.catalog);
        let route = &catalog.get(name)?.route;
        let runtime = inner.registry.runtime(route.tool);
        let injected = route.inject.as_ref().map(|(_, action)| action.as_str());
        let index = runtime.action_index(arguments, injected)?;
        if view
            .as_ref()
            .is_some_and(|v| !v.allowed(route.tool).get(index).is_some_and(|a| *a))
        {
            return None;
        }
        let action = runtime.action(index)?;
        let required = inner.registry.required_scopes(route.tool, action);
        if required.iter().all(|scope| caller.has_scope(scope)) {
            return None;
        }
        Some(required.into_iter().map(str::to_owned).collect())
    }
}

/// The layer: a POST carrying one `tools/call` by an authenticated caller lacking a scope its
/// action needs is answered 403 with the challenge; everything else goes on.
pub(super) async fn insufficient_scope(
    State(step_up): State<StepUp>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST || request.extensions().get::<Principal>().is_none() {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // The body layer buffered the body: collecting it copies nothing.
    let bytes = body
        .collect()
        .await
        .map(|body| body.to_bytes())
        .unwrap_or_default();
    let method = malformed::scan_top_level(&bytes, "method");
    if method.as_ref().and_then(Value::as_str) == Some("tools/call")
        && let Some(caller) = parts.extensions.get::<Principal>()
        && let Ok(message) = serde_json::from_slice::<Value>(&bytes)
        && let Some(params) = message.get("params")
        && let Some(name) = params.get("name").and_then(Value::as_str)
    {
        let no_arguments = Map::new();
        let arguments =
            (params.get("arguments").and_then(Value::as_object)).unwrap_or(&no_arguments);
        if let Some(required) = step_up.server.scopes_lacking(name, arguments, caller) {
            return forbidden(&required, caller, &step_up.metadata_url);
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
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
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{metadata_url}\", \
         error_description=\"The access token lacks a scope this call requires\"",
        scopes.join(" ")
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
