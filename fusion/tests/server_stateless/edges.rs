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
