//! The JSON answers fusion's HTTP layers give in rmcp's place.

use axum::body::Body;
use axum::response::Response;
use http::{StatusCode, header};
use rmcp::model::{ErrorData, RequestId};

use crate::server::malformed::Answer;

/// A JSON response carrying `answer`, closing the connection when `close`.
pub(super) fn json_response(status: StatusCode, answer: &Answer, close: bool) -> Response {
    let body = serde_json::to_vec(&answer.to_json()).unwrap_or_default();
    let mut response = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json");
    if close {
        // hyper closes the connection after a response that says so.
        response = response.header(header::CONNECTION, "close");
    }
    response
        .body(Body::from(body))
        .expect("static headers are valid")
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
