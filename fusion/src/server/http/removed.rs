//! The removed-`initialize` layer: an `initialize` that says it is a request of MCP 2026-07-28
//! (its `_meta` names `io.modelcontextprotocol/protocolVersion` 2026-07-28 or later, or its
//! `MCP-Protocol-Version` header does) asks for a method that revision removed (SEP-2575), and
//! is answered HTTP 404 with JSON-RPC `-32601` and its id, opening no session. Its headers are
//! checked first, as rmcp checks any other request's: an `Mcp-Method` header other than
//! `initialize`, or an `MCP-Protocol-Version` header naming another revision than `_meta`, is
//! answered 400 with `-32020`. An id that is neither a string nor an integer, or none, goes on
//! to rmcp (`-32600`, or no answer to a notification).
//!
//! A `ping` of MCP 2026-07-28, which rmcp answers itself (404, `-32601`, the message `ping`),
//! gets that answer with a message saying what replaces it, as the other removed methods do.
//!
//! It corrects rmcp 3.11's `handle_post`, which routes every `initialize` to the 2025 lifecycle
//! whatever its `_meta` and header say, and opens a session at the newest 2025 revision. A
//! classic `initialize` (neither marker) whose `params.protocolVersion` names 2026-07-28 is the
//! version negotiation of the 2025 lifecycle, and still opens a session at 2025-11-25.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use rmcp::model::{ErrorCode, ErrorData, ProtocolVersion, RequestId};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use super::answer::error_response;
use super::body;
use super::next::Next;
use crate::server::malformed;
use crate::server::stateless::{instead_of, removed_error};
use crate::validation::sent_value;

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

/// The layer's function (see [`Next`]), after the body layer.
pub(super) async fn removed_initialize(request: Request, next: impl Next) -> Response {
    if request.method() != Method::POST || !may_be_removed(&request) {
        return next.run(request).await;
    }
    let (parts, bytes) = body::buffered(request).await;
    let method = malformed::scan_top_level(&bytes, "method");
    match method.as_ref().and_then(Value::as_str) {
        Some("initialize") => {
            if let Some(refusal) = refused_initialize(&parts.headers, &bytes) {
                return refusal;
            }
        }
        Some("ping") => {
            let response = next.run(Request::from_parts(parts, Body::from(bytes)));
            return explain_removed_ping(response.await).await;
        }
        _ => {}
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The answer to an `initialize` of MCP 2026-07-28 (`bytes`, its body): 404 `-32601`, or 400
/// `-32020` when its headers contradict it; `None` for one rmcp answers (a classic
/// `initialize`, a notification, an id serde cannot read).
fn refused_initialize(headers: &http::HeaderMap, bytes: &[u8]) -> Option<Response> {
    let header_version =
        (headers.get("mcp-protocol-version")).and_then(|value| value.to_str().ok());
    // A body serde cannot read (an id neither string nor integer) goes on to rmcp, which
    // answers it; so does a notification, which gets no answer.
    let Ok(Initialize {
        id: Some(id),
        params,
    }) = serde_json::from_slice(bytes)
    else {
        return None;
    };
    let meta_version =
        (params.as_ref()).and_then(|params| params.meta.as_ref()?.get(VERSION_KEY)?.as_str());
    if !(header_version.is_some_and(names_stateless) || meta_version.is_some_and(names_stateless)) {
        return None;
    }
    if let Some(mismatch) = header_mismatch(headers, header_version, meta_version) {
        let error = ErrorData::new(ErrorCode::HEADER_MISMATCH, mismatch, None);
        return Some(error_response(
            StatusCode::BAD_REQUEST,
            Some(id),
            error,
            false,
        ));
    }
    let instead = instead_of("initialize").unwrap_or_default();
    let error = removed_error("initialize", instead);
    Some(error_response(
        StatusCode::NOT_FOUND,
        Some(id),
        error,
        false,
    ))
}

/// Whether the request can be a removed `initialize` or `ping` at all, read from its headers
/// alone so that the body of every other request is not scanned: not one of a session (a 2025
/// session's requests carry its `Mcp-Session-Id`; an `initialize` opens one), and, when it
/// names its method in `Mcp-Method` (every 2026-07-28 request does), one of these two. A
/// header that contradicts the body is rmcp's to refuse (`-32020`).
fn may_be_removed(request: &Request) -> bool {
    let headers = request.headers();
    if headers.contains_key("mcp-session-id") {
        return false;
    }
    match headers.get("mcp-method") {
        Some(method) => matches!(method.as_bytes(), b"initialize" | b"ping"),
        None => true,
    }
}

/// rmcp's answer to a `ping` of MCP 2026-07-28 (404, `-32601` with the message `ping`), its
/// message saying what replaces the method as fusion's answers to the other removed methods
/// do; any other answer as rmcp wrote it.
async fn explain_removed_ping(response: Response) -> Response {
    if response.status() != StatusCode::NOT_FOUND {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = (body.collect().await).map_or_else(|_| Bytes::new(), |body| body.to_bytes());
    let mut answer: Value = match serde_json::from_slice(&bytes) {
        Ok(answer) => answer,
        Err(_) => return Response::from_parts(parts, Body::from(bytes)),
    };
    let Some(error) = answer.get_mut("error").filter(|error| {
        error["code"] == i64::from(ErrorCode::METHOD_NOT_FOUND.0) && error["message"] == "ping"
    }) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let instead = instead_of("ping").unwrap_or_default();
    error["message"] = Value::String(removed_error("ping", instead).message.into_owned());
    parts.headers.remove(http::header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(answer.to_string()))
}

/// What contradicts the body of a 2026-07-28 `initialize` in its headers, as rmcp refuses it in
/// any other request (`-32020`, SEP-2243): an `Mcp-Method` header other than one `initialize`
/// (a middlebox routes on it without reading the body), an `MCP-Protocol-Version` header
/// naming another revision than `_meta`.
fn header_mismatch(
    headers: &http::HeaderMap,
    header_version: Option<&str>,
    meta_version: Option<&str>,
) -> Option<String> {
    let mut methods = headers.get_all("mcp-method").iter();
    if let Some(method) = methods.next()
        && (method != "initialize" || methods.next().is_some())
    {
        let sent = sent_value(&Value::String(
            String::from_utf8_lossy(method.as_bytes()).into_owned(),
        ));
        return Some(format!(
            "Header mismatch: Mcp-Method header {sent} (sent once) must be the body's method 'initialize'"
        ));
    }
    match (header_version, meta_version) {
        (Some(header), Some(meta)) if header != meta => {
            let (header, meta) = (
                sent_value(&Value::String(header.to_owned())),
                sent_value(&Value::String(meta.to_owned())),
            );
            Some(format!(
                "Header mismatch: MCP-Protocol-Version header {header} does not match _meta io.modelcontextprotocol/protocolVersion {meta}"
            ))
        }
        _ => None,
    }
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
