//! The body layer: reads each POST body whole, under a size limit and a deadline, before rmcp
//! sees the request.
//!
//! It corrects rmcp's `expect_json` (`transport/common/server_side_http.rs`), which reads the
//! body with no deadline (a client sending headers and then a slow or no body holds the request
//! forever), answers a body over `max_request_body_bytes` with a plain-text 413 that keeps the
//! connection open, and a body that fails mid-read with a plain-text 500. Here those get a
//! JSON-RPC error: 413 (with the request's id when it appears before the limit) and 408 close
//! the connection, a failed read is a 400. rmcp then reads the buffered body at once.

use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use http::{Method, StatusCode, header};
use http_body_util::BodyExt;
use rmcp::model::ErrorData;
use tokio::time::error::Elapsed;

use super::answer::error_response;
use super::next::Next;
use crate::server::malformed;

/// A request the body layer has read, split into its parts and its bytes (collecting a
/// buffered body copies nothing), for a layer after it that looks into the body.
pub(super) async fn buffered(request: Request) -> (http::request::Parts, Bytes) {
    let (parts, body) = request.into_parts();
    let bytes = (body.collect().await).map_or_else(|_| Bytes::new(), |body| body.to_bytes());
    (parts, bytes)
}

/// How much of a body declared over the limit is read to find the request's id (stdio keeps
/// as much of an oversized line).
const ID_PREFIX_BYTES: usize = 64 * 1024;

/// The limits [`read_body`] reads a body under.
#[derive(Clone, Copy, Debug)]
pub(super) struct BodyLimits {
    /// The most bytes a body may have.
    pub(super) max_bytes: usize,
    /// How long the whole body may take to arrive after the headers.
    pub(super) timeout: Duration,
}

/// The body layer's function (see [`Next`]): a POST goes on with its
/// body read whole, or is answered 413, 408 or 400; other methods carry no body and go on as
/// they are.
pub(super) async fn read_body(
    State(limits): State<BodyLimits>,
    request: Request,
    next: impl Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let limit = limits.max_bytes;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if let Some(length) = declared.filter(|&length| length > limit as u64) {
        // Refused without reading the body, but for its beginning, where the request's id
        // usually is.
        let prefix = limit.min(ID_PREFIX_BYTES);
        let prefix = match within(limits.timeout, read_limited(body, prefix)).await {
            Ok(Ok(bytes) | Err(Read::TooLarge(bytes))) => bytes,
            Err(_) | Ok(Err(Read::Failed(_))) => Bytes::new(),
        };
        return too_large(&prefix, Some(length), limit);
    }
    let bytes = match within(limits.timeout, read_limited(body, limit)).await {
        Err(_elapsed) => return timed_out(limits.timeout),
        Ok(Err(Read::TooLarge(prefix))) => return too_large(&prefix, None, limit),
        Ok(Err(Read::Failed(error))) => {
            tracing::debug!(target: "fusion::server", %error, "reading a request body failed");
            let error =
                ErrorData::invalid_request("Invalid request: the body could not be read.", None);
            return error_response(StatusCode::BAD_REQUEST, None, error, true);
        }
        Ok(Ok(bytes)) => bytes,
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// `read` within `timeout`. A body that has arrived whole with its headers (the usual case) is
/// read at the first poll, without setting a timer.
async fn within<T>(timeout: Duration, read: impl Future<Output = T>) -> Result<T, Elapsed> {
    let mut read = pin!(read);
    if let Poll::Ready(done) = futures::poll!(read.as_mut()) {
        return Ok(done);
    }
    tokio::time::timeout(timeout, read).await
}

/// How reading a body failed.
enum Read {
    /// Over the limit; the bytes read so far (at most the limit), to find the request's id.
    TooLarge(Bytes),
    /// The connection failed or closed mid-body.
    Failed(axum::Error),
}

/// Reads `body` whole, stopping as soon as it exceeds `limit` bytes.
async fn read_limited(mut body: Body, limit: usize) -> Result<Bytes, Read> {
    let mut read = BytesMut::new();
    // The first chunk as it came, while it is the only one: most bodies arrive in one, kept
    // without a copy (and a copy of it, the status layer's, is then a reference count).
    let mut first: Option<Bytes> = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(Read::Failed)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if let Some(first) = first.take() {
            read.extend_from_slice(&first);
        } else if read.is_empty() && data.len() <= limit {
            first = Some(data);
            continue;
        }
        if data.len() > limit - read.len() {
            let room = limit - read.len();
            read.extend_from_slice(&data[..room]);
            return Err(Read::TooLarge(read.freeze()));
        }
        read.extend_from_slice(&data);
    }
    Ok(first.unwrap_or_else(|| read.freeze()))
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
    error_response(StatusCode::PAYLOAD_TOO_LARGE, id, error, true)
}

/// HTTP 408 for a body that did not arrive in time, closing the connection.
fn timed_out(timeout: Duration) -> Response {
    let error = ErrorData::invalid_request(
        format!(
            "Invalid request: the body did not arrive within {} ms.",
            timeout.as_millis()
        ),
        None,
    );
    error_response(StatusCode::REQUEST_TIMEOUT, None, error, true)
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use axum::middleware::from_fn_with_state;
    use futures::StreamExt;
    use serde_json::{Value, json};

    use super::super::tests::through;
    use super::*;

    /// The body layer alone, around a service answering with the body it got.
    async fn send(limits: BodyLimits, request: Request) -> (StatusCode, http::HeaderMap, Bytes) {
        let echo = |request: Request| async move {
            let bytes = request.into_body().collect().await.unwrap().to_bytes();
            Response::new(Body::from(bytes))
        };
        through(from_fn_with_state(limits, read_body), echo, request).await
    }

    fn limits(max_bytes: usize) -> BodyLimits {
        BodyLimits {
            max_bytes,
            timeout: Duration::from_millis(200),
        }
    }

    fn post(body: Body) -> Request {
        Request::post("/").body(body).unwrap()
    }

    fn json(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[tokio::test]
    async fn a_body_within_the_limit_goes_on_whole() {
        let chunks = futures::stream::iter(["{\"a\":", "1}"])
            .map(|chunk| Ok::<_, Infallible>(Bytes::from_static(chunk.as_bytes())));
        let (status, _, body) = send(limits(16), post(Body::from_stream(chunks))).await;
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"{\"a\":1}"[..]));
    }

    #[tokio::test]
    async fn a_body_over_the_limit_gets_413_with_its_id_and_closes() {
        let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#;
        let mut declared = post(Body::from(body));
        declared
            .headers_mut()
            .insert(header::CONTENT_LENGTH, body.len().into());
        let (status, headers, answer) = send(limits(30), declared).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(headers[header::CONNECTION], "close");
        let answer = json(&answer);
        assert_eq!(answer["id"], 7);
        assert_eq!(
            answer["error"]["message"],
            "Invalid request: the body is 58 bytes; the limit is 30 bytes."
        );

        // Without a Content-Length (chunked), the limit is found while reading.
        let stream = futures::stream::iter([Ok::<_, Infallible>(Bytes::from(body))]);
        let (status, _, answer) = send(limits(30), post(Body::from_stream(stream))).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(
            json(&answer)["error"]["message"],
            "Invalid request: the body is over the limit of 30 bytes."
        );
    }

    #[tokio::test]
    async fn a_body_that_does_not_arrive_in_time_gets_408() {
        let never = futures::stream::pending::<Result<Bytes, Infallible>>();
        let (status, headers, answer) = send(limits(30), post(Body::from_stream(never))).await;
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
        assert_eq!(headers[header::CONNECTION], "close");
        assert_eq!(json(&answer)["error"]["code"], json!(-32600));
    }

    #[tokio::test]
    async fn other_methods_go_on_unread() {
        let request = Request::delete("/").body(Body::from("ignored")).unwrap();
        let (status, _, body) = send(limits(1), request).await;
        assert_eq!((status, &body[..]), (StatusCode::OK, &b"ignored"[..]));
    }
}
