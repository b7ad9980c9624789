//! Who a rate limit counts: the transport session, never a name the request carries. A client
//! renaming itself in `_meta` neither dodges its own limit nor spends another client's.

use fusion::server::Server;
use rmcp::model::{Implementation, RequestMetaObject};
use serde_json::json;

use super::support::{Jobs, call, connect, params, text, within};

/// `jobs.send` as if the caller were `name`: `clientInfo` in the request's `_meta`.
fn send_as(name: &str) -> rmcp::model::CallToolRequestParams {
    let mut request = params("jobs", json!({"action": "send", "millis": 1}));
    let mut meta = RequestMetaObject::default();
    meta.set_client_info(Implementation::new(name, "1"));
    request.meta = Some(meta);
    request
}

#[tokio::test]
async fn renaming_neither_dodges_the_limit_nor_spends_another_callers() {
    // `send` allows three calls a minute per caller.
    let server = Server::new("jobs", "1").tool(Jobs::default());
    let attacker = connect(server.clone(), "attacker").await;
    let victim = connect(server, "victim").await;

    let mut answered = Vec::new();
    for n in 0..20 {
        // Half of them claim to be a fresh client, half claim to be the victim.
        let name = if n % 2 == 0 {
            format!("m-{n}")
        } else {
            "victim".to_owned()
        };
        let result = within(attacker.call_tool(send_as(&name)))
            .await
            .expect("a tool result");
        answered.push(result.is_error != Some(true));
    }
    assert_eq!(
        answered.iter().filter(|ok| **ok).count(),
        3,
        "one session, one bucket, whatever names it claims: {answered:?}"
    );
    assert!(answered[..3].iter().all(|ok| *ok) && answered[3..].iter().all(|ok| !ok));

    // The victim's own bucket is untouched.
    for _ in 0..3 {
        let result = call(&victim, "jobs", json!({"action": "send", "millis": 2})).await;
        assert_ne!(result.is_error, Some(true), "{result:?}");
        assert_eq!(text(&result), "sent after 2");
    }
    attacker.cancel().await.unwrap();
    victim.cancel().await.unwrap();
}
