//! The advertised contract: guarded actions list the refusals their guards send, a panicking
//! handler gives its slot back, and refusals name the action as a flat client called it.

use std::time::Duration;

use fusion::guard::GuardSpec;
use fusion::server::Server;
use serde_json::json;

use super::support::{Jobs, call, connect, flags, text, within};

#[tokio::test]
async fn guarded_actions_advertise_the_refusals_their_guards_send() {
    let client = connect(Server::new("jobs", "1").tool(Jobs::default()), "lister").await;
    let tools = within(client.list_all_tools()).await.expect("tools/list");
    let meta = tools[0].meta.as_ref().expect("the error contract");
    let mut listed: Vec<(String, String, String, bool)> = meta["fusion/errors"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["code"].as_str().unwrap().to_owned(),
                e["category"].as_str().unwrap().to_owned(),
                e["retryable"].as_bool().unwrap(),
            )
        })
        .collect();
    listed.sort();
    let expected = [
        ("book", "SERVER_BUSY", "transient"),
        ("book", "TIMEOUT", "transient"),
        ("hold", "SERVER_BUSY", "transient"),
        ("send", "RATE_LIMITED", "rate_limit"),
        ("send", "SERVER_BUSY", "transient"),
        ("work", "SERVER_BUSY", "transient"),
    ]
    // Every refusal is retryable but `book`'s timeout: `book` may have taken effect.
    .map(|(a, c, k)| {
        (
            a.to_owned(),
            c.to_owned(),
            k.to_owned(),
            (a, c) != ("book", "TIMEOUT"),
        )
    });
    assert_eq!(listed, expected);
    // The tool's own definition carries them, so the lockfile records them too.
    use fusion::Tool;
    let definition = Jobs::default().definition();
    let send = definition.action("send").unwrap();
    assert_eq!(
        send.errors
            .iter()
            .map(|e| e.code.as_str())
            .collect::<Vec<_>>(),
        ["RATE_LIMITED", "SERVER_BUSY"]
    );
    client.cancel().await.expect("clean shutdown");
}

/// A tool with one slot whose handler panics.
struct Fragile;

/// Fails loudly.
#[fusion::tool(concurrency(max_active = 1, max_queued = 0))]
impl Fragile {
    /// Panics.
    #[action]
    async fn explode(&self) -> String {
        tokio::task::yield_now().await;
        panic!("boom")
    }
}

#[tokio::test]
async fn a_panicking_handler_gives_its_slot_back() {
    let client = connect(Server::new("fragile", "1").tool(Fragile), "panicker").await;
    // One slot, no queue: a slot kept by a panicked call would turn the next into SERVER_BUSY.
    for _ in 0..3 {
        let result = call(&client, "fragile", json!({})).await;
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            flags(&result)["code"],
            "INTERNAL_ERROR",
            "{}",
            text(&result)
        );
    }
    client.cancel().await.expect("clean shutdown");
}

#[tokio::test(start_paused = true)]
async fn refusals_name_the_action_as_a_flat_client_called_it() {
    let server = Server::new("jobs", "1")
        .tool(Jobs::default())
        .exposition(fusion::server::Exposition::Flat)
        .guard("jobs", GuardSpec::new().timeout(Duration::from_millis(250)));
    let client = connect(server, "flat").await;
    for _ in 0..3 {
        call(&client, "jobs_send", json!({"millis": 1})).await;
    }
    let limited = call(&client, "jobs_send", json!({"millis": 1})).await;
    assert_eq!(flags(&limited)["code"], "RATE_LIMITED");
    assert!(
        text(&limited).contains("Too many calls to `jobs_send`")
            && text(&limited).contains("before calling `jobs_send` again"),
        "{}",
        text(&limited)
    );
    let timed_out = call(&client, "jobs_work", json!({"millis": 1_000})).await;
    assert!(
        text(&timed_out).contains("`jobs_work` did not finish within 250 ms"),
        "{}",
        text(&timed_out)
    );
    client.cancel().await.expect("clean shutdown");
}
