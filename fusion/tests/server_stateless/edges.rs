//! Clients that misbehave: a 2025 session that stops reading its standalone stream.

use super::*;

#[tokio::test]
async fn a_session_that_stops_reading_holds_back_no_other_sessions_list_changes() {
    let server = server();
    let changes = server.list_changes();
    let mut service = service(server);
    // The first session opens its standalone stream and never reads it: once rmcp's buffers
    // are full, a notification to it waits for ever.
    let stuck = open_session(&mut service).await;
    let (status, _unread) = send(&mut service, standalone_stream(&stuck)).await;
    assert_eq!(status, 200);
    let reader = open_session(&mut service).await;
    let (status, mut standalone) = send(&mut service, standalone_stream(&reader)).await;
    assert_eq!(status, 200);
    // Far more changes than the stuck stream's buffers hold: the reading session hears each.
    for _ in 0..256 {
        changes.tools();
        let change = standalone.next().await.unwrap();
        assert_eq!(change["method"], "notifications/tools/list_changed");
    }
}

#[tokio::test]
async fn a_removed_initialize_is_refused_for_its_headers_and_ids_as_any_request() {
    let mut service = service(server());
    let mut misrouted = request(3, "initialize", json!({}));
    (misrouted.headers_mut()).insert("mcp-method", "tools/list".parse().unwrap());
    let (status, messages) = send(&mut service, misrouted).await;
    let answer = messages.all().await;
    assert_eq!(status, 400, "{answer:?}");
    assert_eq!(answer[0]["error"]["code"], -32020);
    assert_eq!(answer[0]["id"], 3);

    let mut versions = request(4, "initialize", json!({}));
    (versions.headers_mut()).insert("mcp-protocol-version", "2027-01-01".parse().unwrap());
    let (status, messages) = send(&mut service, versions).await;
    let answer = messages.all().await;
    assert_eq!(status, 400, "{answer:?}");
    assert_eq!(answer[0]["error"]["code"], -32020);

    // An id JSON-RPC does not allow is an invalid request, not a removed method.
    for id in [json!(null), json!({"a": 1}), json!(1.5)] {
        let mut odd = request(5, "initialize", json!({}));
        let mut body: Value = serde_json::from_str(odd.body()).unwrap();
        body["id"] = id.clone();
        *odd.body_mut() = body.to_string();
        let (status, messages) = send(&mut service, odd).await;
        let answer = messages.all().await;
        assert_eq!(status, 400, "{id}: {answer:?}");
        assert_eq!(answer[0]["error"]["code"], -32600, "{id}");
    }
}

#[tokio::test]
async fn a_removed_ping_says_what_replaces_it() {
    let mut service = service(server());
    let (status, messages) = send(&mut service, request(6, "ping", json!({}))).await;
    let answer = messages.all().await;
    assert_eq!(status, 404, "{answer:?}");
    assert_eq!(answer[0]["id"], 6);
    assert_eq!(
        answer[0]["error"]["message"],
        "Method not found: 'ping' was removed in MCP 2026-07-28; any request shows the server is up."
    );
}
