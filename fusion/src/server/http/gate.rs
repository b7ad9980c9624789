//! The session gate: two layers keeping sessions to their callers and under their caps.
//!
//! [`known_sessions`] answers a request naming a session that is not open, or is another
//! caller's, before anything else reads it. It corrects rmcp's `handle_post` and `handle_get`,
//! which answer an unknown session with a plain-text 404, and `handle_delete`, which accepts
//! any id with 202; and it binds a session to the caller that opened it, which rmcp does not.
//!
//! [`session_caps`] reserves the slot of the session an `initialize` opens, under the server's
//! and the caller's caps in one step, and refuses it with 503 at either. rmcp's
//! `handle_post` creates a session for every `initialize` (`SessionManager::create_session`
//! takes nothing to refuse by), and at a refusal of the store would log and answer a plain-text
//! 500. The reservation reaches the store in the request's extensions as an [`Opening`], which
//! rmcp hands to `SessionManager::initialize_session` with the `initialize` message.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use http::{HeaderValue, Method, StatusCode, header};
use rmcp::model::ErrorData;

use super::answer::error_response;
use super::body;
use super::next::Next;
use super::sessions::{AtCap, CappedSessions, Opening};
use crate::auth::Principal;
use crate::server::malformed;

/// What the gate knows: the sessions, and the rules for opening one.
#[derive(Clone, Debug)]
pub(super) struct Gate {
    pub(super) sessions: Arc<CappedSessions>,
    /// The most sessions one authenticated caller may hold.
    pub(super) max_sessions_per_caller: usize,
    /// The `Retry-After` of a refused `initialize`.
    pub(super) retry_after: Duration,
    /// Sessionless serving: no session ids are issued, so none is checked, and none reserved.
    pub(super) stateless: bool,
}

/// The request's `Mcp-Session-Id`, if any.
fn session_id(request: &Request) -> Option<&str> {
    request
        .headers()
        .get("mcp-session-id")
        .and_then(|id| id.to_str().ok())
}

/// A request naming a session that is not open (never was, or already ended) is answered 404
/// (MCP Streamable HTTP transport, "Session Management"), with a JSON-RPC error saying to start
/// a new session, whatever the method. A session serves the authenticated caller that opened
/// it, and no other: to anyone else it does not exist (MCP specification, Security Best
/// Practices, "Session Hijacking").
pub(super) async fn known_sessions(
    State(gate): State<Gate>,
    request: Request,
    next: impl Next,
) -> Response {
    if let Some(id) = session_id(&request)
        && ((!gate.stateless && !gate.sessions.is_open(id))
            || !gate
                .sessions
                .serves(id, request.extensions().get::<Principal>()))
    {
        return session_not_found();
    }
    next.run(request).await
}

/// An `initialize` (a POST without a session, its body read by the body layer) reserves its
/// session's slot here, under both caps in one step, and is refused at either: at the server's,
/// before rmcp would try to open a session; at the caller's, so that one caller cannot take
/// every slot. Dropped unused (rmcp refused the request before opening a session, or the client
/// went away), the reservation frees its slot.
pub(super) async fn session_caps(
    State(gate): State<Gate>,
    request: Request,
    next: impl Next,
) -> Response {
    if gate.stateless || request.method() != Method::POST || session_id(&request).is_some() {
        return next.run(request).await;
    }
    let (mut parts, bytes) = body::buffered(request).await;
    let method = malformed::scan_top_level(&bytes, "method");
    if method.as_ref().and_then(|m| m.as_str()) != Some("initialize") {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    let owner = parts
        .extensions
        .get::<Principal>()
        .map(Principal::identity_key);
    let opening = match gate.sessions.reserve(owner, gate.max_sessions_per_caller) {
        Ok(reservation) => Opening::new(reservation),
        Err(full) => return busy(&bytes, &full, gate.retry_after),
    };
    parts.extensions.insert(opening.clone());
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    // A reservation rmcp did not turn into a session is freed now, not when the last copy of
    // the request goes.
    drop(opening.take());
    response
}

/// HTTP 404 for a session id this caller may not use, worded as for one that does not exist.
fn session_not_found() -> Response {
    let error = ErrorData::invalid_request(
        "Session not found: no session with this Mcp-Session-Id for this caller. Start a new \
         session with initialize.",
        None,
    );
    error_response(StatusCode::NOT_FOUND, None, error, false)
}

/// HTTP 503 with `Retry-After` for an `initialize` refused at a session cap (`full` says which:
/// "it holds its maximum of 1000 sessions"), with a JSON-RPC error (`-32603`: JSON-RPC defines
/// no busy code, and fusion invents none) carrying its id.
fn busy(body: &[u8], full: &AtCap, retry_after: Duration) -> Response {
    let id = malformed::scan_top_level(body, "id").and_then(|id| serde_json::from_value(id).ok());
    let secs = retry_after.as_secs().max(1);
    let error = ErrorData::internal_error(
        format!(
            "Server busy: {full}. Retry in {secs} s, or end unused sessions (HTTP DELETE with \
             their Mcp-Session-Id)."
        ),
        None,
    );
    let mut response = error_response(StatusCode::SERVICE_UNAVAILABLE, id, error, false);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

#[cfg(test)]
mod tests {
    use axum::middleware::from_fn_with_state;
    use serde_json::Value;

    use super::super::tests::through;
    use super::*;

    fn gate(max_sessions: usize) -> Gate {
        Gate {
            sessions: Arc::new(CappedSessions::new(
                max_sessions,
                Duration::from_secs(60),
                false,
            )),
            max_sessions_per_caller: 1,
            retry_after: Duration::from_secs(7),
            stateless: false,
        }
    }

    /// The known-sessions layer, or with `CAPS` the session-caps layer, alone around a service
    /// answering 200 with whether the request carried an [`Opening`] holding a reservation.
    async fn send(gate: &Gate, caps: bool, request: Request) -> (StatusCode, Value) {
        let reserved = |request: Request| async move {
            let opening = request.extensions().get::<Opening>();
            Response::new(Body::from(
                opening.is_some_and(Opening::is_reserved).to_string(),
            ))
        };
        let state = gate.clone();
        let (status, _, body) = if caps {
            through(from_fn_with_state(state, session_caps), reserved, request).await
        } else {
            through(from_fn_with_state(state, known_sessions), reserved, request).await
        };
        (status, serde_json::from_slice(&body).unwrap())
    }

    const KNOWN: bool = false;
    const CAPS: bool = true;

    fn initialize(principal: Option<&str>) -> Request {
        let mut request = Request::post("/")
            .body(Body::from(
                r#"{"jsonrpc":"2.0","id":3,"method":"initialize"}"#,
            ))
            .unwrap();
        if let Some(subject) = principal {
            request.extensions_mut().insert(Principal::new(subject));
        }
        request
    }

    #[tokio::test]
    async fn a_session_that_is_not_open_is_not_found() {
        let gate = gate(1);
        let request = Request::delete("/")
            .header("mcp-session-id", "gone")
            .body(Body::empty())
            .unwrap();
        let (status, answer) = send(&gate, KNOWN, request).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(answer["error"]["code"], -32600);

        let fresh = Request::get("/").body(Body::empty()).unwrap();
        assert_eq!(send(&gate, KNOWN, fresh).await.0, StatusCode::OK);
    }

    #[tokio::test]
    async fn an_initialize_goes_on_with_a_reservation_freed_after_it() {
        let gate = gate(1);
        let (status, reserved) = send(&gate, CAPS, initialize(Some("alice"))).await;
        assert_eq!((status, reserved), (StatusCode::OK, Value::Bool(true)));
        // The inner service opened no session: the slot is free again.
        assert_eq!(
            send(&gate, CAPS, initialize(Some("bob"))).await.0,
            StatusCode::OK
        );

        let call = Request::post("/")
            .body(Body::from(
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
            ))
            .unwrap();
        assert_eq!(send(&gate, CAPS, call).await.1, Value::Bool(false));
    }

    #[tokio::test]
    async fn an_initialize_at_a_cap_gets_503_with_its_id() {
        let gate = gate(1);
        let _held = gate.sessions.reserve(None, 1).unwrap();
        let (status, answer) = send(&gate, CAPS, initialize(None)).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(answer["id"], 3);
        assert_eq!(
            answer["error"]["message"],
            "Server busy: it holds its maximum of 1 sessions. Retry in 7 s, or end unused \
             sessions (HTTP DELETE with their Mcp-Session-Id)."
        );
    }
}
