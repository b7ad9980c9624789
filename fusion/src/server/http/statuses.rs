//! The status layer: the two answers of rmcp's service an MCP client cannot use, replaced.
//!
//! - rmcp's `handle_delete` answers a session it ended with 202 Accepted and no body; the MCP
//!   SDKs take 200 or 204 (the Python SDK logs "Session termination failed: 202"): 204 here.
//! - rmcp's `expect_json` (`transport/common/server_side_http.rs`) answers a body it cannot read
//!   as one JSON-RPC message with the 415 it also gives a wrong `Content-Type`, in plain text.
//!   For a body declared `application/json`, the 415 can only be that, and gets the answer
//!   stdio gives such a line: HTTP 400 with the JSON-RPC error (the request's id when a shallow
//!   scan finds it), or 200 with a `VALIDATION_ERROR` envelope for a `tools/call` whose JSON
//!   serde refuses. A wrong `Content-Type` keeps rmcp's 415.

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http::{Method, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ErrorData};

use super::answer::json_response;
use super::body;
use super::next::Next;
use crate::server::malformed::{self, Answer};

/// The status layer's function (see [`Next`]). A POST's body is expected read
/// whole already (the body layer does), so keeping a copy costs nothing.
pub(super) async fn rmcp_statuses(request: Request, next: impl Next) -> Response {
    if request.method() == Method::DELETE {
        let mut response = next.run(request).await;
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
            *response.body_mut() = Body::empty();
        }
        return response;
    }
    if request.method() != Method::POST || !declares_json(&request) {
        return next.run(request).await;
    }
    let (parts, bytes) = body::buffered(request).await;
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes.clone())))
        .await;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
        && let Err(error) = serde_json::from_slice::<ClientJsonRpcMessage>(&bytes)
    {
        return malformed_body(&bytes, &error);
    }
    response
}

/// Whether the request's `Content-Type` is `application/json`, as rmcp reads it.
fn declares_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split(';').next().unwrap_or_default().trim();
            essence.eq_ignore_ascii_case("application/json")
        })
}

/// The answer to a body rmcp could not read as a JSON-RPC message (see the module's docs).
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

#[cfg(test)]
mod tests {
    use axum::middleware::from_fn;
    use serde_json::Value;

    use super::super::tests::through;
    use super::*;

    /// The status layer alone, around a service answering every request with `status` and a
    /// plain-text body, as rmcp does.
    async fn send(status: StatusCode, request: Request) -> (StatusCode, String) {
        let inner = move |_: Request| async move {
            let mut response = Response::new(Body::from("rmcp's text"));
            *response.status_mut() = status;
            response
        };
        let (status, _, body) = through(from_fn(rmcp_statuses), inner, request).await;
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    fn post(content_type: &str, body: &'static str) -> Request {
        Request::post("/")
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body))
            .unwrap()
    }

    #[tokio::test]
    async fn an_ended_session_is_204() {
        let delete = Request::delete("/").body(Body::empty()).unwrap();
        assert_eq!(
            send(StatusCode::ACCEPTED, delete).await,
            (StatusCode::NO_CONTENT, String::new())
        );
    }

    #[tokio::test]
    async fn an_unreadable_json_body_gets_the_json_rpc_error_stdio_gives() {
        let (status, body) = send(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            post(
                "application/json; charset=utf-8",
                r#"{"jsonrpc":"2.0","id":5,"method":"#,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (5.into(), (-32700).into())
        );
    }

    #[tokio::test]
    async fn a_wrong_content_type_and_other_answers_stay_rmcps() {
        let form = post("application/x-www-form-urlencoded", "a=1");
        assert_eq!(
            send(StatusCode::UNSUPPORTED_MEDIA_TYPE, form).await,
            (StatusCode::UNSUPPORTED_MEDIA_TYPE, "rmcp's text".to_owned())
        );
        let fine = post("application/json", r#"{"jsonrpc":"2.0","method":"x"}"#);
        assert_eq!(
            send(StatusCode::ACCEPTED, fine).await.0,
            StatusCode::ACCEPTED
        );
    }
}
