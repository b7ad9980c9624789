//! The echo layer: rmcp's refusals of a request's headers (HTTP 400), with the header values
//! they quote bounded.
//!
//! It corrects rmcp's `validate_request_headers` (`transport/common/mcp_headers.rs`) and
//! `validate_standard_headers` (`transport/streamable_http_server/tower.rs`), which refuse a
//! request whose `Mcp-Method`, `Mcp-Name` or `Mcp-Param-*` header (MCP 2026-07-28, SEP-2243)
//! disagrees with its body with HTTP 400 and JSON-RPC `-32020` (HeaderMismatch), quoting both
//! values whole: ``Mcp-Name header `<the header>` does not match body value `<the body's>` ``.
//! A 1 MB header (or body value) came back whole in the error. Here each quoted value over
//! [`MAX_QUOTED`] bytes is cut to its beginning, followed by its length (`` `aaaa…` (1048576
//! bytes) ``), and a message is at most [`MAX_MESSAGE`] bytes; so is rmcp's plain-text 400
//! for an `MCP-Protocol-Version` it does not know, which quotes the header too. Every other
//! answer goes through untouched, unread.

use std::borrow::Cow;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http::{StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;

use super::next::Next;

/// The most bytes of a quoted value kept.
pub(super) const MAX_QUOTED: usize = 64;

/// The most bytes of a refusal's message kept.
pub(super) const MAX_MESSAGE: usize = 1024;

/// The echo layer's function (see [`Next`]), right around rmcp's service.
pub(super) async fn bounded_echoes(request: Request, next: impl Next) -> Response {
    let response = next.run(request).await;
    if response.status() != StatusCode::BAD_REQUEST {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // rmcp's 400s are small, whole bodies (but for the echo).
    let Ok(bytes) = body.collect().await.map(|body| body.to_bytes()) else {
        return Response::from_parts(parts, Body::empty());
    };
    let json = (parts.headers.get(header::CONTENT_TYPE))
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
    let bounded = if json {
        bounded_error(&bytes)
    } else {
        let text = String::from_utf8_lossy(&bytes);
        match bounded(&text) {
            Cow::Owned(text) => Some(text.into_bytes()),
            Cow::Borrowed(_) => None,
        }
    };
    match bounded {
        Some(bytes) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Response::from_parts(parts, Body::from(bytes))
        }
        None => Response::from_parts(parts, Body::from(bytes)),
    }
}

/// A JSON-RPC error answer with its message bounded; `None` when it needs no change (or is not
/// one).
fn bounded_error(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut answer: Value = serde_json::from_slice(bytes).ok()?;
    let message = answer.pointer_mut("/error/message")?;
    let Cow::Owned(shorter) = bounded(message.as_str()?) else {
        return None;
    };
    *message = Value::String(shorter);
    serde_json::to_vec(&answer).ok()
}

/// `message` with every `` `quoted` `` value over [`MAX_QUOTED`] bytes cut (its length in bytes
/// after it), then the whole cut at [`MAX_MESSAGE`] bytes; borrowed when nothing was cut.
fn bounded(message: &str) -> Cow<'_, str> {
    let parts: Vec<&str> = message.split('`').collect();
    // A part between two backquotes is a quoted value (odd places, closed after).
    let quoted = |i: usize| i % 2 == 1 && i + 1 < parts.len();
    let long = (0..parts.len()).any(|i| quoted(i) && parts[i].len() > MAX_QUOTED);
    if !long && message.len() <= MAX_MESSAGE {
        return Cow::Borrowed(message);
    }
    let mut out = String::with_capacity(MAX_MESSAGE.min(message.len()));
    let mut length = None;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push('`');
        }
        if let Some(bytes) = length.take() {
            out.push_str(&format!(" ({bytes} bytes)"));
        }
        if quoted(i) && part.len() > MAX_QUOTED {
            out.push_str(prefix(part, MAX_QUOTED));
            out.push('…');
            length = Some(part.len());
        } else {
            out.push_str(part);
        }
    }
    if out.len() > MAX_MESSAGE {
        let kept = prefix(&out, MAX_MESSAGE).len();
        out.truncate(kept);
        out.push('…');
    }
    Cow::Owned(out)
}

/// The longest beginning of `text` of at most `max` bytes that ends on a character boundary.
fn prefix(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use axum::middleware::from_fn;
    use serde_json::json;

    use super::super::tests::through;
    use super::*;

    /// The echo layer alone, around a service answering every request with `status`, `body`
    /// and its content type.
    async fn send(status: StatusCode, content_type: &'static str, body: String) -> String {
        let inner = move |_: Request| {
            let body = body.clone();
            async move {
                let mut response = Response::new(Body::from(body));
                *response.status_mut() = status;
                (response.headers_mut())
                    .insert(header::CONTENT_TYPE, content_type.parse().unwrap());
                response
            }
        };
        let request = Request::post("/").body(Body::empty()).unwrap();
        let (_, _, body) = through(from_fn(bounded_echoes), inner, request).await;
        String::from_utf8(body.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_huge_quoted_header_value_comes_back_cut_with_its_length() {
        let huge = "a".repeat(1 << 20);
        let message = format!("Mcp-Name header `{huge}` does not match body value `echo`");
        let answer =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32020, "message": message}});
        let body = send(
            StatusCode::BAD_REQUEST,
            "application/json",
            answer.to_string(),
        )
        .await;
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            answer["error"]["message"],
            format!(
                "Mcp-Name header `{}…` (1048576 bytes) does not match body value `echo`",
                "a".repeat(MAX_QUOTED)
            )
        );
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (json!(1), json!(-32020))
        );

        let text = format!("Bad Request: Unsupported MCP-Protocol-Version: {huge}");
        let body = send(StatusCode::BAD_REQUEST, "text/plain", text).await;
        assert_eq!(body.len(), MAX_MESSAGE + '…'.len_utf8());
    }

    #[tokio::test]
    async fn short_messages_and_other_answers_go_through_unchanged() {
        let short = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Mcp-Name header `a` does not match body value `b`"}}"#;
        let body = send(
            StatusCode::BAD_REQUEST,
            "application/json",
            short.to_owned(),
        )
        .await;
        assert_eq!(body, short);
        let long = "x".repeat(5000);
        assert_eq!(send(StatusCode::OK, "text/plain", long.clone()).await, long);
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let message = format!("header `{}` and `é`", "é".repeat(100));
        let cut = bounded(&message);
        assert_eq!(
            cut,
            format!(
                "header `{}…` (200 bytes) and `é`",
                "é".repeat(MAX_QUOTED / 2)
            )
        );
        assert_eq!(bounded("an `unclosed quote"), "an `unclosed quote");
    }
}
