//! The session caps under parallel `initialize`s: requests released together, each on its own
//! connection, open exactly as many sessions as a cap allows, the rest get the cap's refusal,
//! and no refused or failed `initialize` keeps a slot.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::{Next, from_fn};
use axum::response::Response;
use fusion::auth::Principal;
use futures::{StreamExt, stream};
use http_body_util::StreamBody;
use hyper::body::{Bytes, Frame};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::harness::{
    Reply, Running, delete, initialize, open_session, post, post_request, send, start,
};

/// `initialize`s sent at once, and the cap they meet.
const PARALLEL: u64 = 20;
const CAP: usize = 3;

/// Every request arrives as the authenticated caller `alice`, as an auth layer would put it.
async fn as_alice(mut request: Request, next: Next) -> Response {
    request.extensions_mut().insert(Principal::new("alice"));
    next.run(request).await
}

/// POSTs `count` `initialize`s, each on its own connection, released together: every request is
/// sent but the last byte of its body, then, once all are waiting, every last byte. The server
/// reads the bodies at about the same time, so each one's cap check runs before any session
/// the others open is bound.
async fn initialize_together(addr: SocketAddr, count: u64) -> Vec<Reply> {
    let release = CancellationToken::new();
    let mut replies = JoinSet::new();
    for id in 0..count {
        let body = Bytes::from(initialize(id));
        let length = body.len();
        let (first, last) = (body.slice(..length - 1), body.slice(length - 1..));
        let released = release.clone();
        let held_back = async move {
            released.cancelled().await;
            last
        };
        let frames = stream::iter([first])
            .chain(stream::once(held_back))
            .map(|data| Ok::<_, Infallible>(Frame::data(data)))
            .boxed();
        let request = post_request(addr, None)
            .header("content-length", length)
            .body(StreamBody::new(frames))
            .unwrap();
        replies.spawn(send(addr, request));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    release.cancel();
    replies.join_all().await
}

/// The sessions `replies` opened; every other reply must be the refusal at a cap, whose message
/// starts with `refusal`.
fn opened(replies: &[Reply], refusal: &str) -> Vec<String> {
    let mut sessions = Vec::new();
    for reply in replies {
        if reply.status == 200 {
            sessions.push(reply.header("mcp-session-id").unwrap().to_owned());
            continue;
        }
        assert_eq!(reply.status, 503, "{reply:?}");
        assert!(reply.header("retry-after").is_some(), "{reply:?}");
        let error = &reply.message()["error"];
        assert_eq!(error["code"], -32603, "{reply:?}");
        assert!(
            error["message"].as_str().unwrap().starts_with(refusal),
            "{reply:?}"
        );
    }
    sessions
}

/// Releases `PARALLEL` `initialize`s together against a cap of `CAP`: exactly `CAP` open; ending
/// one frees exactly one slot; ending all frees every slot (the refused kept none).
async fn exactly_the_cap_opens(addr: SocketAddr, refusal: &str) {
    let mut sessions = opened(&initialize_together(addr, PARALLEL).await, refusal);
    assert_eq!(sessions.len(), CAP, "opened {sessions:?}");

    assert_eq!(delete(addr, &sessions.pop().unwrap()).await.status, 204);
    let reopened = opened(&initialize_together(addr, PARALLEL).await, refusal);
    assert_eq!(reopened.len(), 1, "opened {reopened:?}");

    for session in sessions.iter().chain(&reopened) {
        assert_eq!(delete(addr, session).await.status, 204);
    }
    let fresh = opened(&initialize_together(addr, PARALLEL).await, refusal);
    assert_eq!(fresh.len(), CAP, "opened {fresh:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_initializes_of_one_caller_open_exactly_its_cap() {
    let Running { addr, stop, .. } =
        start(|http| http.max_sessions_per_caller(CAP).layer(from_fn(as_alice))).await;
    exactly_the_cap_opens(
        addr,
        "Server busy: this caller holds its maximum of 3 sessions.",
    )
    .await;
    stop.cancel();
}

#[tokio::test(flavor = "current_thread")]
async fn parallel_initializes_open_exactly_the_server_cap_and_log_no_error() {
    let (log, _default) = crate::captured::Captured::install();
    let Running { addr, stop, .. } = start(|http| http.max_sessions(CAP)).await;
    exactly_the_cap_opens(addr, "Server busy: it holds its maximum of 3 sessions.").await;
    stop.cancel();
    let text = log.text();
    assert!(
        !text.contains("ERROR"),
        "a refusal is not a server error:\n{text}"
    );
}

#[tokio::test]
async fn an_initialize_rmcp_refuses_keeps_no_slot() {
    let Running { addr, stop, .. } = start(|http| {
        http.max_sessions(CAP)
            .max_sessions_per_caller(CAP)
            .layer(from_fn(as_alice))
    })
    .await;
    // rmcp refuses, before opening a session, an `initialize` whose `MCP-Protocol-Version`
    // header (2025-06-18) contradicts its body; the slot reserved for it is freed.
    let contradicting = initialize(1).replace("2025-06-18", "2025-03-26");
    for _ in 0..2 * CAP {
        let refused = post(addr, None, contradicting.clone()).await;
        assert_eq!(refused.status, 400, "{refused:?}");
    }
    for _ in 0..CAP {
        open_session(addr).await;
    }
    stop.cancel();
}
