//! The removed-`initialize` layer: an `initialize` that says it is a request of MCP 2026-07-28
//! (its `_meta` names `io.modelcontextprotocol/protocolVersion` 2026-07-28 or later, or its
//! `MCP-Protocol-Version` header does) asks for a method that revision removed (SEP-2575), and
//! is answered HTTP 404 with JSON-RPC `-32601` and its id, opening no session.
//!
//! It corrects rmcp 3.11's `handle_post`, which routes every `initialize` to the 2025 lifecycle
//! whatever its `_meta` and header say, and opens a session at the newest 2025 revision. A
//! classic `initialize` (neither marker) whose `params.protocolVersion` names 2026-07-28 is the
//! version negotiation of the 2025 lifecycle, and still opens a session at 2025-11-25.

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::{Method, StatusCode};
use rmcp::model::{ProtocolVersion, RequestId};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use super::answer::error_response;
use super::body;
use crate::server::malformed;
use crate::server::stateless::{instead_of_initialize, removed_error};

/// The `_meta` key naming a request's protocol version (SEP-2575).
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// The parts of an `initialize` body this layer reads; the rest is skipped unread.
#[derive(Deserialize)]
struct Initialize {
    id: Option<RequestId>,
    params: Option<Params>,
}

#[derive(Deserialize)]
struct Params {
    #[serde(rename = "_meta")]
    meta: Option<Map<String, Value>>,
    #[serde(flatten)]
    _rest: IgnoredAny,
}

/// The layer's function (`axum::middleware::from_fn`), after the body layer.
pub(super) async fn removed_initialize(request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, bytes) = body::buffered(request).await;
    let method = malformed::scan_top_level(&bytes, "method");
    if method.as_ref().and_then(Value::as_str) != Some("initialize") {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    let header = (parts.headers.get("mcp-protocol-version"))
        .and_then(|value| value.to_str().ok())
        .is_some_and(names_stateless);
    // A body serde cannot read goes on to rmcp, which answers it.
    let body: Option<Initialize> = serde_json::from_slice(&bytes).ok();
    let meta = (body.as_ref())
        .and_then(|body| {
            body.params
                .as_ref()?
                .meta
                .as_ref()?
                .get(VERSION_KEY)?
                .as_str()
        })
        .is_some_and(names_stateless);
    if !(header || meta) {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    }
    let id = body.and_then(|body| body.id);
    let error = removed_error("initialize", instead_of_initialize());
    error_response(StatusCode::NOT_FOUND, id, error, false)
}

/// Whether `version` names MCP 2026-07-28 or a later revision: a `YYYY-MM-DD` date (anything
/// else goes on to rmcp, which says the version is not supported).
fn names_stateless(version: &str) -> bool {
    let dated = version.len() == 10 && version.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    dated && version >= ProtocolVersion::NO_INITIALIZE.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_dated_revision_from_2026_07_28_on_is_stateless() {
        assert!(names_stateless("2026-07-28"));
        assert!(names_stateless("2027-01-01"));
        assert!(!names_stateless("2025-11-25"));
        // Not a revision: rmcp says it is not supported.
        assert!(!names_stateless("v999.0.0"));
        assert!(!names_stateless("9999"));
    }
}
