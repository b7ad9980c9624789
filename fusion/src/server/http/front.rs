//! The MCP route's front: reads each POST body under a size limit and a deadline, reserves the
//! slot of the session an `initialize` opens (or refuses it at a cap), hands the request to
//! rmcp's Streamable HTTP service, and turns the answers rmcp gives without a JSON-RPC body
//! (415 for a body it cannot read) into explanatory ones.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use http::{HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt, Full};
use rmcp::model::{ClientJsonRpcMessage, ErrorData};
use rmcp::transport::StreamableHttpService;

use super::sessions::{AtCap, CappedSessions, opening, owner_of};
use crate::auth::Principal;
use crate::server::Server;
use crate::server::malformed::{self, Answer};

/// How much of a body declared over the limit is read to find the request's id (stdio keeps
/// as much of an oversized line).
const ID_PREFIX_BYTES: usize = 64 * 1024;

/// What the MCP route needs to serve one request.
pub(super) struct Front {
    pub(super) mcp: StreamableHttpService<Server, CappedSessions>,
    pub(super) sessions: Arc<CappedSessions>,
    pub(super) max_body_bytes: usize,
    pub(super) body_timeout: Duration,
    /// The `Retry-After` of a refused `initialize`.
    pub(super) retry_after: Duration,
    /// The most sessions one authenticated caller may hold.
    pub(super) max_sessions_per_caller: usize,
    /// Sessionless serving: no session ids are issued, so none is checked here.
    pub(super) stateless: bool,
}

/// The axum handler of the MCP route.
pub(super) async fn serve(State(front): State<Arc<Front>>, request: Request) -> Response {
    // A request naming a session that is not open (never was, or already ended) is answered
    // 404 (MCP Streamable HTTP transport, "Session Management"), with a JSON-RPC error saying
    // to start a new session, whatever the method: rmcp answers a POST or GET in plain text and
    // accepts a DELETE with 202. A session serves the authenticated caller that opened it, and
    // no other: to anyone else it does not exist (MCP specification, Security Best Practices,
    // "Session Hijacking").
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|id| id.to_str().ok())
        .map(str::to_owned);
    if let Some(id) = &session
        && ((!front.stateless && !front.sessions.is_open(id))
            || !front
                .sessions
                .serves(id, request.extensions().get::<Principal>()))
    {
        return session_not_found();
    }
    if request.method() != Method::POST {
        // GET (the event stream) and DELETE (end a session) carry no body to read.
        let ending = request.method() == Method::DELETE;
        let mut response = Box::pin(front.mcp.handle(request)).await.map(Body::new);
        // rmcp answers an ended session 202; the MCP SDKs take 200 or 204 (the Python SDK
        // logs "Session termination failed: 202" otherwise).
        if ending && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
            *response.body_mut() = Body::empty();
        }
        return response;
    }
    let (parts, body) = request.into_parts();
    let limit = front.max_body_bytes;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if let Some(length) = declared.filter(|&length| length > limit as u64) {
        // Refused without reading the body, but for its beginning, where the request's id
        // usually is.
        let prefix = limit.min(ID_PREFIX_BYTES);
        let prefix =
            match tokio::time::timeout(front.body_timeout, read_limited(body, prefix)).await {
                Ok(Ok(bytes) | Err(Read::TooLarge(bytes))) => bytes,
                Err(_) | Ok(Err(Read::Failed(_))) => Bytes::new(),
            };
        return too_large(&prefix, Some(length), limit);
    }
    let bytes = match tokio::time::timeout(front.body_timeout, read_limited(body, limit)).await {
        Err(_elapsed) => return body_timed_out(front.body_timeout),
        Ok(Err(Read::TooLarge(prefix))) => return too_large(&prefix, None, limit),
        Ok(Err(Read::Failed(error))) => {
            tracing::debug!(target: "fusion::server", %error, "reading a request body failed");
            return json_response(
                StatusCode::BAD_REQUEST,
                &Answer::Error(
                    None,
                    ErrorData::invalid_request(
                        "Invalid request: the body could not be read.",
                        None,
                    ),
                ),
                true,
            );
        }
        Ok(Ok(bytes)) => bytes,
    };
    let declares_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split(';').next().unwrap_or_default().trim();
            essence.eq_ignore_ascii_case("application/json")
        });
    // An `initialize` (no session yet) reserves its session's slot here, under both caps in one
    // step, and is refused at either: at the server's, before rmcp would try to open a session
    // (and log the refusal as a server error); at the caller's, so that one caller cannot take
    // every slot.
    let opens_session = !front.stateless
        && session.is_none()
        && malformed::scan_top_level(&bytes, "method")
            .as_ref()
            .and_then(|m| m.as_str())
            == Some("initialize");
    let reservation = if opens_session {
        let owner = parts.extensions.get::<Principal>().map(owner_of);
        match front.sessions.reserve(owner, front.max_sessions_per_caller) {
            Ok(reservation) => Some(reservation),
            Err(full) => return busy(&bytes, &full, front.retry_after),
        }
    } else {
        None
    };
    let request = Request::from_parts(parts, Full::new(bytes.clone()));
    // Boxed once: rmcp's future is several kilobytes, and this one is moved into the
    // reservation's scope and each future around it (unboxed, those copies were a fifth of the
    // server's instructions under callgrind).
    let handling = Box::pin(front.mcp.handle(request));
    let response = match reservation {
        Some(reservation) => opening(reservation, handling).await,
        None => handling.await,
    };
    // rmcp answers 415 with a plain-text body both for a wrong `Content-Type` (kept) and for a
    // JSON body it cannot read as one JSON-RPC message (answered here, as over stdio).
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && declares_json
        && let Err(error) = serde_json::from_slice::<ClientJsonRpcMessage>(&bytes)
    {
        return malformed_body(&bytes, &error);
    }
    response.map(Body::new)
}

/// HTTP 404 for a session id this caller may not use, worded as for one that does not exist.
fn session_not_found() -> Response {
    let error = ErrorData::invalid_request(
        "Session not found: no session with this Mcp-Session-Id for this caller. Start a new \
         session with initialize.",
        None,
    );
    json_response(StatusCode::NOT_FOUND, &Answer::Error(None, error), false)
}

/// How reading a body failed.
enum Read {
    /// Over the limit; the bytes read so far (at most the limit), to find the request's id.
    TooLarge(Bytes),
    /// The connection failed or closed mid-body.
    Failed(axum::Error),
}

/// Reads `body` whole, stopping as soon as it exceeds `limit` bytes.
async fn read_limited(body: Body, limit: usize) -> Result<Bytes, Read> {
    let mut body = body;
    let mut read = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(Read::Failed)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if data.len() > limit - read.len() {
            let room = limit - read.len();
            read.extend_from_slice(&data[..room]);
            return Err(Read::TooLarge(read.freeze()));
        }
        read.extend_from_slice(&data);
    }
    Ok(read.freeze())
}

/// The answer to a body rmcp could not read as a JSON-RPC message: HTTP 400 with the JSON-RPC
/// error stdio would give (request id included when a shallow scan finds it), or HTTP 200 with a
/// `VALIDATION_ERROR` envelope for a `tools/call` whose JSON serde refuses.
fn malformed_body(bytes: &[u8], error: &serde_json::Error) -> Response {
    let answer = malformed::answer_unparsable(bytes, error, "body").unwrap_or_else(|| {
        // A notification or a response: JSON-RPC never answers those, but HTTP must say
        // something; the MCP specification allows an error without an id (Transports,
        // Streamable HTTP, "Sending Messages to the Server").
        Answer::Error(
            None,
            ErrorData::invalid_request(
                "Invalid request: the body is not a JSON-RPC notification or response this \
                 server can read.",
                None,
            ),
        )
    });
    tracing::debug!(target: "fusion::server", id = ?answer.id(), message = %answer.message(), "malformed request");
    let status = match answer {
        Answer::Envelope(..) => StatusCode::OK,
        Answer::Error(..) => StatusCode::BAD_REQUEST,
    };
    json_response(status, &answer, false)
}

/// HTTP 413 for a body over the limit, closing the connection: the rest of the body is never
/// read, so the connection cannot carry another request.
fn too_large(prefix: &[u8], declared: Option<u64>, limit: usize) -> Response {
    let (id, mut error) = malformed::answer_oversized(prefix, 0, limit);
    error.message = match declared {
        Some(length) => {
            format!("Invalid request: the body is {length} bytes; the limit is {limit} bytes.")
        }
        None => format!("Invalid request: the body is over the limit of {limit} bytes."),
    }
    .into();
    json_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        &Answer::Error(id, error),
        true,
    )
}

/// HTTP 408 for a body that did not arrive in time, closing the connection.
fn body_timed_out(timeout: Duration) -> Response {
    let error = ErrorData::invalid_request(
        format!(
            "Invalid request: the body did not arrive within {} ms.",
            timeout.as_millis()
        ),
        None,
    );
    json_response(
        StatusCode::REQUEST_TIMEOUT,
        &Answer::Error(None, error),
        true,
    )
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
    let mut response = json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &Answer::Error(id, error),
        false,
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

/// A JSON response carrying `answer`, closing the connection when `close`.
fn json_response(status: StatusCode, answer: &Answer, close: bool) -> Response {
    let body = serde_json::to_vec(&answer.to_json()).unwrap_or_default();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if close {
        // hyper closes the connection after a response that says so.
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
