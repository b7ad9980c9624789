//! Concurrency limits: 10,000 calls against 8 running and 64 waiting, a full gate's refusal and
//! its guidance, and a `retry_after` that follows observed call durations.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use fusion::ErrorCategory;
use fusion::guard::{ConcurrencyLimit, GuardSpec};
use fusion::server::Server;
use fusion::testing::Tester;
use serde_json::json;

use super::support::{Jobs, Probe, connect, flags, params, text, within};

/// Waits until `n` handlers have started.
async fn started(probe: &Probe, n: usize) {
    within(async {
        while probe.started.load(Ordering::SeqCst) < n {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_calls_against_8_active_and_64_queued_are_each_answered() {
    const TOTAL: usize = 10_000;
    let jobs = Jobs::default();
    let client = Arc::new(connect(Server::new("jobs", "1").tool(jobs.clone()), "load").await);
    let calls = (0..TOTAL).map(|_| {
        let client = Arc::clone(&client);
        tokio::spawn(async move {
            client
                .call_tool(params("jobs", json!({"action": "work", "millis": 2})))
                .await
        })
    });
    let calls: Vec<_> = calls.collect();
    let (mut ok, mut busy) = (0, 0);
    for call in calls {
        let result = within(call)
            .await
            .expect("no panic")
            .expect("a tool result");
        match text(&result) {
            "done" => ok += 1,
            busy_text if busy_text.starts_with("<tool_error code=\"SERVER_BUSY\"") => {
                let flags = flags(&result);
                assert!(flags["retryAfterSeconds"].as_u64().unwrap() >= 1, "{flags}");
                assert_eq!(flags["errorCategory"], "transient");
                busy += 1;
            }
            other => panic!("unexpected answer: {other}"),
        }
    }
    assert_eq!(ok + busy, TOTAL, "every call answered once");
    assert_eq!(
        ok,
        jobs.probe.started.load(Ordering::SeqCst),
        "a success per handler run"
    );
    assert!(ok >= 8, "at least the first wave ran: {ok}");
    assert!(busy > 0, "10,000 calls at once overflow 72 places");
    let most = jobs.probe.most.load(Ordering::SeqCst);
    assert!(most <= 8, "at most 8 handlers at once, saw {most}");
}

#[tokio::test]
async fn a_full_gate_refuses_with_capacity_and_queue_guidance_but_malformed_calls_never_queue() {
    let jobs = Jobs::default();
    let tester = Tester::new().tool(jobs.clone());
    // `hold`: 1 running, 1 waiting.
    let spawn = |tester: &Tester| {
        let tester = tester.clone();
        tokio::spawn(async move { tester.call("jobs.hold", json!({})).await })
    };
    let first = spawn(&tester);
    within(jobs.probe.entered.notified()).await;
    let queued = spawn(&tester);
    tokio::task::yield_now().await;

    // A malformed call is answered by validation, not by the full gate.
    tester
        .call("jobs.hold", json!({"extra": 1}))
        .await
        .assert_error("VALIDATION_ERROR");

    let refused = tester.call("jobs.hold", json!({})).await;
    refused
        .assert_error("SERVER_BUSY")
        .assert_category(ErrorCategory::Transient)
        .assert_retryable(true)
        .assert_recovery_contains("Send calls one at a time");
    let error = refused.response().tool_error().unwrap();
    assert_eq!(
        error.message(),
        "`jobs.hold` is at capacity: 1 call running and 1 call waiting, the most it takes."
    );
    assert!(error.retry_after_secs().unwrap() >= 1);

    jobs.probe.release.notify_one();
    within(first).await.unwrap().assert_text("released");
    // The queued call got the freed slot.
    started(&jobs.probe, 2).await;
    jobs.probe.release.notify_one();
    within(queued).await.unwrap().assert_text("released");
}

#[tokio::test]
async fn the_busy_retry_after_follows_observed_call_durations() {
    tokio::time::pause();
    let jobs = Jobs::default();
    let tester = Tester::new().tool(jobs.clone()).guard(
        "jobs.work",
        GuardSpec::new().concurrency(ConcurrencyLimit::new(1, 0)),
    );
    // Calls of 40 s each teach the gate how long a call takes.
    for _ in 0..30 {
        tester
            .call("jobs.work", json!({"millis": 40_000}))
            .await
            .assert_text("done");
    }
    let running = tokio::spawn({
        let tester = tester.clone();
        async move { tester.call("jobs.work", json!({"millis": 40_000})).await }
    });
    within(jobs.probe.entered.notified()).await;
    let refused = tester.call("jobs.work", json!({"millis": 1})).await;
    let secs = refused
        .assert_error("SERVER_BUSY")
        .response()
        .tool_error()
        .unwrap()
        .retry_after_secs()
        .unwrap();
    // One call ahead, about 40 s each (the average converges from its 1 s start).
    assert!((30..=40).contains(&secs), "retry_after {secs}");
    within(running).await.unwrap().assert_text("done");
}

/// A call of `subject` from `ip` over HTTP: a principal and the client's address.
#[cfg(feature = "http")]
fn over_http(subject: &str, ip: [u8; 4]) -> fusion::RequestContext {
    let (mut parts, ()) = http::Request::new(()).into_parts();
    let addr = std::net::SocketAddr::from((ip, 40_000));
    parts.extensions.insert(fusion::auth::ClientAddr(addr));
    fusion::RequestContext::new()
        .with_principal(fusion::auth::Principal::new(subject))
        .with_http_parts(Arc::new(parts))
}

#[cfg(feature = "http")]
#[tokio::test]
async fn one_caller_cannot_hold_every_slot_and_queue_place() {
    let jobs = Jobs::default();
    // `hold`: 1 running, 1 waiting. A caller that never lets its calls finish (a user who
    // never answers) holds the running slot, not the waiting place too.
    let tester = Tester::new().tool(jobs.clone());
    let spawn = |context: fusion::RequestContext| {
        let tester = tester.clone();
        tokio::spawn(async move { tester.call_with("jobs.hold", json!({}), context).await })
    };
    let first = spawn(over_http("mallory", [192, 0, 2, 1]));
    within(jobs.probe.entered.notified()).await;
    let refused = within(spawn(over_http("mallory", [192, 0, 2, 1])))
        .await
        .unwrap();
    refused
        .assert_error("SERVER_BUSY")
        .assert_retryable(true)
        .assert_recovery_contains("Wait for an answer");
    assert_eq!(
        refused.response().tool_error().unwrap().message(),
        "You already have 1 call of `jobs.hold` running or waiting, the most one caller may have."
    );

    // Another caller waits in the place the first could not take, and runs next.
    let other = spawn(over_http("alice", [198, 51, 100, 7]));
    started(&jobs.probe, 1).await;
    tokio::task::yield_now().await;
    assert!(!other.is_finished(), "alice waits for the slot");
    jobs.probe.release.notify_one();
    within(first).await.unwrap().assert_text("released");
    started(&jobs.probe, 2).await;
    jobs.probe.release.notify_one();
    within(other).await.unwrap().assert_text("released");
    // An answered call gives its caller's share back.
    let again = spawn(over_http("mallory", [192, 0, 2, 1]));
    started(&jobs.probe, 3).await;
    jobs.probe.release.notify_one();
    within(again).await.unwrap().assert_text("released");
}
