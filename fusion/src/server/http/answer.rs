//! The JSON answers fusion's HTTP layers give in rmcp's place.

use axum::body::Body;
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};
use rmcp::model::{ErrorData, RequestId};

use crate::server::malformed::Answer;

/// A JSON response carrying `answer`, closing the connection when `close`.
pub(super) fn json_response(status: StatusCode, answer: &Answer, close: bool) -> Response {
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

/// [`json_response`] carrying the JSON-RPC `error`, with the request's `id` when known.
pub(super) fn error_response(
    status: StatusCode,
    id: Option<RequestId>,
    error: ErrorData,
    close: bool,
) -> Response {
    json_response(status, &Answer::Error(id, error), close)
}
