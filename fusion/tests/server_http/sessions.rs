//! The session cap and idle expiry: at the cap a new `initialize` gets 503 with `Retry-After`
//! and a JSON-RPC error carrying its id, live sessions keep working, and slots free when a
//! session is deleted or expires.

use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use serde_json::json;

use crate::harness::{Running, initialize, open_session, post, send};

fn ping(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string()
}

#[tokio::test]
async fn at_the_cap_initialize_is_refused_with_503_and_retry_after() {
    let Running { addr, .. } = crate::harness::start(|http| http.max_sessions(2)).await;
    let first = open_session(addr).await;
    let _second = open_session(addr).await;

    let refused = post(addr, None, initialize(77)).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("retry-after"), Some("30"));
    let message = refused.message();
    assert_eq!(message["id"], 77);
    assert_eq!(message["error"]["code"], -32603);
    assert!(
        message["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Server busy: it holds its maximum of 2 sessions."),
        "{message}"
    );

    // Live sessions keep working at the cap.
    let pong = post(addr, Some(&first), ping(3)).await;
    assert_eq!(pong.status, 200, "{pong:?}");

    // Ending one frees its slot.
    let delete = || {
        http::Request::delete("/mcp")
            .header("host", addr.to_string())
            .header("mcp-session-id", &first)
            .header("mcp-protocol-version", "2025-06-18")
            .body(Full::new(Bytes::new()))
            .unwrap()
    };
    // 204, which every MCP SDK takes as a session ended (rmcp itself answers 202).
    assert_eq!(send(addr, delete()).await.status, 204);
    // Ending it again names a session that no longer exists; any other request naming it gets
    // the same answer (rmcp's own is plain text).
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).to_string();
    for ended in [
        send(addr, delete()).await,
        post(addr, Some(&first), call).await,
    ] {
        assert_eq!(ended.status, 404, "{ended:?}");
        assert!(
            ended.message()["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Session not found"),
            "{ended:?}"
        );
    }
    // The slot is freed when the session's worker has stopped: retry briefly.
    let mut status = 0;
    for _ in 0..100 {
        status = post(addr, None, initialize(78)).await.status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, 200);
}

#[tokio::test]
async fn idle_sessions_expire_and_free_their_slot() {
    let Running { addr, .. } = crate::harness::start(|http| {
        http.max_sessions(1)
            .session_idle_timeout(Duration::from_millis(300))
    })
    .await;
    let session = open_session(addr).await;
    let refused = post(addr, None, initialize(2)).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    // The hint never exceeds the idle timeout (rounded up to a whole second).
    assert_eq!(refused.header("retry-after"), Some("1"));

    // Once idle past the timeout, the session is gone and its slot free.
    let mut status = 0;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        status = post(addr, None, initialize(3)).await.status;
        if status == 200 {
            break;
        }
    }
    assert_eq!(status, 200);
    let expired = post(addr, Some(&session), ping(4)).await;
    assert_eq!(expired.status, 404, "{expired:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_refusal_at_the_cap_is_not_logged_as_a_server_error() {
    let (log, _default) = crate::captured::Captured::install();
    let Running { addr, .. } = crate::harness::start(|http| http.max_sessions(1)).await;
    let _only = open_session(addr).await;
    for id in 0..5 {
        assert_eq!(post(addr, None, initialize(id)).await.status, 503);
    }
    let text = log.text();
    assert!(
        !text.contains("ERROR"),
        "a refusal is not a server error:\n{text}"
    );
}
