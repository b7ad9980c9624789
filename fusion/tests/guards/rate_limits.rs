//! Rate limits: the call over the limit waits exactly until its slot frees, builder options
//! override the attribute and key by anything, and the refusal's flags on the wire.

use std::time::Duration;

use fusion::guard::{GuardSpec, RateLimit};
use fusion::server::Server;
use fusion::testing::Tester;
use fusion::{ErrorCategory, RequestContext};
use serde_json::json;

use super::support::{Jobs, call, connect, flags, text};

#[tokio::test(start_paused = true)]
async fn the_call_over_the_rate_limit_waits_exactly_until_its_slot_frees() {
    let tester = Tester::new().tool(Jobs::default());
    let alice = || RequestContext::new().with_caller("alice-secret-key");
    for n in 0..3 {
        tester
            .call_with("jobs.send", json!({"millis": n}), alice())
            .await
            .assert_success();
    }
    // 3 calls a minute: one slot frees every 20 seconds.
    let refused = tester
        .call_with("jobs.send", json!({"millis": 3}), alice())
        .await;
    refused
        .assert_error("RATE_LIMITED")
        .assert_category(ErrorCategory::RateLimit)
        .assert_retry_after(20)
        .assert_recovery("Wait 20 seconds before calling `jobs.send` again; do not retry sooner.");
    assert_eq!(
        refused.response().tool_error().unwrap().message(),
        "Too many calls to `jobs.send`: at most 3 calls every minute."
    );
    assert!(
        !refused.snapshot().contains("alice"),
        "the key is never echoed"
    );

    // Another caller has its own bucket.
    tester
        .call_with(
            "jobs.send",
            json!({"millis": 0}),
            RequestContext::new().with_caller("bob"),
        )
        .await
        .assert_success();

    // Malformed calls take no slot.
    tester
        .call_with("jobs.send", json!({"millis": "soon"}), alice())
        .await
        .assert_error("VALIDATION_ERROR");

    tokio::time::advance(Duration::from_millis(19_500)).await;
    tester
        .call_with("jobs.send", json!({"millis": 4}), alice())
        .await
        .assert_retry_after(1);
    tokio::time::advance(Duration::from_millis(500)).await;
    tester
        .call_with("jobs.send", json!({"millis": 5}), alice())
        .await
        .assert_text("sent after 5");
}

#[tokio::test(start_paused = true)]
async fn builder_options_override_the_attribute_and_keys_can_be_custom() {
    let tester = Tester::new().tool(Jobs::default()).guard(
        "jobs.send",
        GuardSpec::new().rate_limit(RateLimit::per_caller(1, Duration::from_secs(10)).key_by(
            |request| {
                request.context.meta()["tenant"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            },
        )),
    );
    let tenant = |t: &str| {
        let meta = json!({ "tenant": t });
        RequestContext::new().with_meta(meta.as_object().unwrap().clone())
    };
    let send = |ctx| tester.call_with("jobs.send", json!({"millis": 1}), ctx);
    send(tenant("acme")).await.assert_success();
    send(tenant("acme"))
        .await
        .assert_error("RATE_LIMITED")
        .assert_retry_after(10);
    send(tenant("globex")).await.assert_success();
}

#[tokio::test]
async fn a_rate_limited_call_carries_its_flags_on_the_wire() {
    let server = Server::new("jobs", "1").tool(Jobs::default());
    let client = connect(server, "wire").await;
    for _ in 0..3 {
        call(&client, "jobs", json!({"action": "send", "millis": 1})).await;
    }
    let refused = call(&client, "jobs", json!({"action": "send", "millis": 1})).await;
    assert_eq!(refused.is_error, Some(true));
    assert_eq!(
        text(&refused),
        "<tool_error code=\"RATE_LIMITED\" severity=\"error\">\n\
         <message>Too many calls to `jobs.send`: at most 3 calls every minute.</message>\n\
         <recovery>Wait 20 seconds before calling `jobs.send` again; do not retry sooner.</recovery>\n\
         <retry_after>20 seconds</retry_after>\n\
         </tool_error>"
    );
    let flags = flags(&refused);
    assert_eq!(flags["retryAfterSeconds"], 20);
    assert_eq!(flags["isRetryable"], true);
    assert_eq!(flags["errorCategory"], "rate_limit");
}
