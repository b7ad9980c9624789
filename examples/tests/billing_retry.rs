//! End to end against the billing example: a `charge` refused `RATE_LIMITED` by the
//! billing server's own guard is retried by `fusion::client::Client` after exactly the stated
//! `retryAfterSeconds`, and then succeeds. The server runs in-process over a duplex stream,
//! rmcp's client on the other end; tokio's clock is paused, and drives both the rate limiter
//! and the client's wait.

#[path = "../billing.rs"]
#[allow(
    dead_code,
    reason = "only the tools are used here, not the command line"
)]
mod billing;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion::auth::Principal;
use fusion::client::{Client, Decision, RetryPolicy};
use fusion::server::Server;
use fusion::{ErrorCategory, ErrorCode};
use rmcp::ServiceExt;
use rmcp::model::ClientConfig;
use serde_json::{Value, json};

/// What the policy's hook saw: the code, the stated `retryAfterSeconds`, the decision, and the
/// (paused) clock when the decision was made.
type Seen = Arc<Mutex<Vec<(ErrorCode, Option<u64>, Decision, tokio::time::Instant)>>>;

/// One cent on `inv_0001` (EUR, 120.00 open): valid, so it takes a rate-limit slot.
fn one_cent() -> Value {
    json!({"invoice_id": "inv_0001", "amount_cents": 1, "currency": "EUR"})
}

#[tokio::test(start_paused = true)]
async fn a_rate_limited_charge_retried_after_the_stated_delay_succeeds() {
    let billing = billing::Billing::seeded();
    let ledger = billing::Ledger::sharing(&billing);
    let server = Server::new("fusion-billing", "0.0.0")
        .tool(billing)
        .tool(ledger)
        // In process, the caller is the user who launched it, allowed to charge.
        .local_principal(Principal::new("local-user").with_scopes(["charge"]));
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    let serving = tokio::spawn(async move {
        let running = server.serve_io(read, write).await.expect("serves");
        running.waiting().await.expect("stops cleanly")
    });
    let running = ClientConfig::default()
        .serve(client_end)
        .await
        .expect("initialize succeeds");

    let seen: Seen = Arc::default();
    let hook = Arc::clone(&seen);
    // The default policy (4 attempts, 30 s of waits): the 12 s the server states fits.
    let policy = RetryPolicy::new().on_decision(move |event| {
        hook.lock().unwrap().push((
            event.flags.code.clone(),
            event.flags.retry_after_secs,
            event.decision.clone(),
            tokio::time::Instant::now(),
        ));
    });
    let client = Client::discover(running.peer().clone())
        .await
        .expect("tools/list")
        .with_retry_policy(policy);

    // `charge` allows 5 calls a minute per client: a burst of 5, then one every 12 s.
    for n in 1..=5 {
        let output = client
            .call("billing.charge", one_cent())
            .await
            .unwrap_or_else(|err| panic!("charge {n} of the budget: {err}"));
        assert_eq!(output.attempts(), 1);
    }
    assert!(seen.lock().unwrap().is_empty(), "no failure yet");

    // The sixth: refused, retried after the stated delay, then answered.
    let started = tokio::time::Instant::now();
    let output = client
        .call("billing.charge", one_cent())
        .await
        .expect("the retried charge succeeds");
    let elapsed = started.elapsed();

    assert_eq!(output.attempts(), 2, "one refusal, one retry");
    let paid = output.json::<Value>().unwrap();
    assert_eq!(paid["id"], "inv_0001");
    assert_eq!(paid["status"], "open");

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "one decision: {seen:?}");
    let (code, retry_after, decision, at) = &seen[0];
    assert_eq!(*code, ErrorCode::RateLimited);
    let retry_after = retry_after.expect("the envelope states retryAfterSeconds");
    assert_eq!(
        retry_after, 12,
        "60 s / 5 calls: the next slot frees in 12 s"
    );
    assert_eq!(
        *decision,
        Decision::Retry {
            wait: Duration::from_secs(retry_after)
        },
        "a rate limit waits exactly retryAfterSeconds, no jitter"
    );
    // The wait happened on the clock: from the decision to the answer is the stated delay
    // (the paused clock moves only by timers, so nothing else adds to it).
    assert_eq!(*at, started, "the refusal took no time on the paused clock");
    assert_eq!(elapsed, Duration::from_secs(retry_after));

    // The limit still holds after the retry: the slot the retry took is spent.
    let err = client
        .clone()
        .with_retry_policy(RetryPolicy::never())
        .call("billing.charge", one_cent())
        .await
        .expect_err("the budget is spent again");
    let flags = err.flags().expect("flags");
    assert_eq!(flags.code, ErrorCode::RateLimited);
    assert_eq!(flags.category, ErrorCategory::RateLimit);
    assert_eq!(flags.retry_after_secs, Some(12));

    running.cancel().await.expect("clean shutdown");
    serving.await.expect("the server task ends");
}
