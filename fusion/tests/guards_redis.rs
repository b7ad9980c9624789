//! The shared rate-limit store (feature `redis`) against a real `redis-server` started on
//! loopback for the test: two server instances enforce one limit, and a Redis that is down
//! gets the configured fallback as an envelope, never a panic.
//!
//! Skipped, with the reason printed, only when no `redis-server` binary is installed and
//! `FUSION_REQUIRE_REDIS` is unset (CI sets it, so a missing Redis fails there).
#![cfg(feature = "redis")]

use std::time::Duration;

use fusion::guard::{GuardSpec, Guards, RateLimit, RedisStore, StoreFallback};
use fusion::server::Server;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService};

#[path = "support/redis.rs"]
mod redis_server;
use redis_server::{Redis, free_port};

/// Greets.
#[fusion::tool]
fn greet() -> String {
    "hello".to_owned()
}

type Client = RunningService<RoleClient, ClientConfig>;

async fn connect(server: Server) -> Client {
    let mut config = ClientConfig::default();
    config.client_info = Implementation::new("replica-test", "0.0.1");
    tokio::time::timeout(Duration::from_secs(10), server.serve_in_process(config))
        .await
        .expect("handshake in time")
        .expect("client connects")
}

async fn call(client: &Client) -> CallToolResult {
    tokio::time::timeout(
        Duration::from_secs(10),
        client.call_tool(CallToolRequestParams::new("greet")),
    )
    .await
    .expect("an answer within 10 s")
    .expect("a tool result")
}

fn text(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

fn replica(store: RedisStore) -> Server {
    let guards = Guards::new().redis(store).guard(
        "greet",
        // Keyed by tenant (here one, fixed): a key every replica computes alike. The default
        // key, the transport session, is one replica's own.
        GuardSpec::new().rate_limit(
            RateLimit::per_caller(3, Duration::from_secs(60)).key_by(|_| "tenant-a".to_owned()),
        ),
    );
    Server::new("greeter", "1").tool(Greet).guards(guards)
}

#[tokio::test]
async fn two_servers_sharing_one_redis_enforce_one_limit() {
    let Some(redis) = Redis::start().await else {
        return;
    };
    // A prefix of its own, so reruns against a long-lived Redis start clean.
    let prefix = format!("fusion-test:{}", fusion::internal::new_error_id());
    let store = || RedisStore::new(&redis.url).unwrap().prefix(prefix.clone());
    let a = connect(replica(store())).await;
    let b = connect(replica(store())).await;

    // Three calls a minute for this tenant, across both replicas.
    assert_eq!(text(&call(&a).await), "hello");
    assert_eq!(text(&call(&b).await), "hello");
    assert_eq!(text(&call(&a).await), "hello");
    for client in [&b, &a] {
        let refused = call(client).await;
        assert!(
            text(&refused).starts_with("<tool_error code=\"RATE_LIMITED\""),
            "{}",
            text(&refused)
        );
        let flags = &refused.meta.as_ref().unwrap()["fusion/error"];
        let secs = flags["retryAfterSeconds"].as_u64().unwrap();
        // One slot frees every 20 s; some of that has passed since the first call.
        assert!((1..=20).contains(&secs), "{flags}");
        assert!(
            !text(&refused).contains("tenant-a"),
            "the key is never echoed"
        );
    }

    // The bucket lives in Redis, under the prefix, keyed by target and tenant.
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(keys, [format!("{prefix}:greet:tenant-a")]);
}

#[tokio::test]
async fn a_redis_that_is_down_gets_the_configured_fallback() {
    // Nothing listens here: connecting fails at once.
    let url = format!("redis://127.0.0.1:{}/", free_port());

    let refusing = connect(replica(RedisStore::new(&url).unwrap())).await;
    let refused = call(&refusing).await;
    let body = text(&refused);
    assert!(
        body.starts_with(
            "<tool_error code=\"SERVER_BUSY\" severity=\"error\">\n\
             <message>The rate limiter is unavailable, so the call was refused to protect the server.</message>"
        ),
        "{body}"
    );
    assert!(
        body.contains("<retry_after>5 seconds</retry_after>"),
        "{body}"
    );
    assert!(body.contains("<detail key=\"errorId\">"), "{body}");
    assert!(!body.contains("127.0.0.1"), "no address leaks: {body}");
    assert_eq!(refused.is_error, Some(true));

    let allowing = connect(replica(
        RedisStore::new(&url)
            .unwrap()
            .fallback(StoreFallback::Allow)
            .timeout(Duration::from_millis(200)),
    ))
    .await;
    for _ in 0..5 {
        assert_eq!(text(&call(&allowing).await), "hello");
    }
}

#[tokio::test]
async fn a_bad_redis_url_is_an_error_at_startup() {
    assert!(RedisStore::new("not a url").is_err());
}
