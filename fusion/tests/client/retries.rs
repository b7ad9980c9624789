//! Retries under the paused clock: exact rate-limit delays, backoff, exhausted attempts and
//! budgets, escalation, and flags read from `_meta`.

use std::time::Duration;

use fusion::client::{AbortReason, Decision, RetryPolicy};
use fusion::server::Exposition;
use fusion::{ErrorCategory, ErrorCode, ToolError};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{Flaky, client_for, exact_policy, failed, ms, secs};

#[tokio::test(start_paused = true)]
async fn a_rate_limited_call_is_retried_after_exactly_the_stated_delay_and_succeeds() {
    let flaky =
        Flaky::failing([ToolError::new(ErrorCode::RateLimited, "Too many fetches").retry_after(1)]);
    let (client, log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;

    let start = Instant::now();
    let output = client
        .call("flaky.fetch", json!({}))
        .await
        .expect("succeeds on the retry");
    assert_eq!(start.elapsed(), secs(1), "waited exactly retryAfterSeconds");
    assert_eq!(output.text(), Some("ok 2"));
    assert_eq!(output.attempts(), 2);
    assert!(output.warnings().is_empty());
    assert_eq!(flaky.calls(), 2);
    assert_eq!(
        *log.lock().unwrap(),
        [(
            1,
            "RATE_LIMITED".to_owned(),
            Decision::Retry { wait: secs(1) },
            Duration::ZERO
        )]
    );
}

#[tokio::test(start_paused = true)]
async fn transient_failures_back_off_exponentially_up_to_the_cap() {
    let busy = || ToolError::new(ErrorCode::ServerBusy, "Busy");
    let flaky = Flaky::failing([busy(), busy(), busy(), busy(), busy()]);
    let (client, log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;

    let start = Instant::now();
    let output = client
        .call("flaky.fetch", Value::Null)
        .await
        .expect("the sixth attempt succeeds");
    assert_eq!(output.attempts(), 6);
    assert_eq!(output.text(), Some("ok 6"));
    let waits: Vec<Duration> = log
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(_, _, d, _)| d.wait())
        .collect();
    assert_eq!(
        waits,
        [ms(100), ms(200), ms(300), ms(300), ms(300)],
        "doubling, capped at 300 ms"
    );
    assert_eq!(start.elapsed(), ms(1200));
    let waited: Vec<Duration> = log.lock().unwrap().iter().map(|(_, _, _, w)| *w).collect();
    assert_eq!(waited, [ms(0), ms(100), ms(300), ms(600), ms(900)]);
}

#[tokio::test(start_paused = true)]
async fn attempts_are_exhausted_and_the_last_failure_is_returned() {
    let flaky = Flaky::failing((0..10).map(|n| ToolError::timeout(format!("slow #{n}"))));
    let (client, log, _running) =
        client_for(&flaky, Exposition::Grouped, exact_policy().max_attempts(3)).await;

    let start = Instant::now();
    let failure = failed(client.call("flaky.fetch", json!({})).await);
    assert_eq!(start.elapsed(), ms(300), "100 ms then 200 ms");
    assert_eq!(failure.attempts(), 3);
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::AttemptsExhausted)
    );
    assert_eq!(
        failure.tool_error().unwrap().message(),
        "slow #2",
        "the last attempt's result"
    );
    assert_eq!(failure.flags().category, ErrorCategory::Transient);
    assert_eq!(flaky.calls(), 3);
    let decisions: Vec<&'static str> = log
        .lock()
        .unwrap()
        .iter()
        .map(|(_, _, d, _)| d.as_str())
        .collect();
    assert_eq!(
        decisions,
        ["retry", "retry", "abort"],
        "the hook sees the give-up too"
    );
}

#[tokio::test(start_paused = true)]
async fn a_delay_past_the_budget_is_surfaced_not_slept_through() {
    let flaky = Flaky::failing([ToolError::rate_limited("Daily quota used", 3600)]);
    let (client, _log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let start = Instant::now();
    let failure = failed(client.call("flaky.fetch", json!({})).await);
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::DelayBudgetExhausted { wait: secs(3600) })
    );
    assert_eq!(failure.flags().retry_after_secs, Some(3600));
}

#[tokio::test(start_paused = true)]
async fn auth_failures_are_escalated_without_a_retry() {
    let flaky = Flaky::failing([ToolError::unauthorized("Session expired")]);
    let (client, log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let failure = failed(client.call("flaky.fetch", json!({})).await);
    assert!(failure.is_escalation());
    assert_eq!(failure.decision(), &Decision::Escalate);
    assert_eq!(failure.attempts(), 1);
    assert_eq!(failure.flags().category, ErrorCategory::Auth);
    assert_eq!(flaky.calls(), 1);
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn unknown_not_found_and_critical_failures_are_not_retried() {
    let cases = [
        (
            ToolError::internal("Ledger exploded"),
            Decision::Abort(AbortReason::Category(ErrorCategory::Unknown)),
        ),
        (
            // Says "retry" in prose and flags: unknown still means no retry.
            ToolError::new("LEDGER_ODD", "Transient glitch, retry now").retryable(true),
            Decision::Abort(AbortReason::Category(ErrorCategory::Unknown)),
        ),
        (
            ToolError::not_found("No such thing"),
            Decision::Abort(AbortReason::Category(ErrorCategory::NotFound)),
        ),
        (
            ToolError::timeout("Ledger down").critical(),
            Decision::Abort(AbortReason::Critical),
        ),
    ];
    for (error, decision) in cases {
        let flaky = Flaky::failing([error.clone()]);
        let (client, _log, _running) =
            client_for(&flaky, Exposition::Grouped, exact_policy()).await;
        let failure = failed(client.call("flaky.fetch", json!({})).await);
        assert_eq!(failure.decision(), &decision, "{error:?}");
        assert_eq!(flaky.calls(), 1, "{error:?} was retried");
        assert_eq!(failure.tool_error().unwrap().to_xml(), error.to_xml());
    }
}

#[tokio::test(start_paused = true)]
async fn flags_come_from_meta_not_only_from_the_code() {
    // A custom code the client cannot categorise by itself: the server declared it transient,
    // and `_meta["fusion/error"]` says so, so the client retries it.
    let flaky = Flaky::failing([ToolError::new("LEDGER_BUSY", "Ledger locked")
        .category(ErrorCategory::Transient)
        .explanation("lock held by nightly job")]);
    let (client, log, _running) = client_for(&flaky, Exposition::Grouped, exact_policy()).await;
    let output = client
        .call("flaky.fetch", json!({}))
        .await
        .expect("retried");
    assert_eq!(output.attempts(), 2);
    let (_, code, decision, _) = log.lock().unwrap()[0].clone();
    assert_eq!(
        (code.as_str(), decision),
        ("LEDGER_BUSY", Decision::Retry { wait: ms(100) })
    );

    // Without the retry, the failure carries the flags and applies them to the parsed error.
    let flaky = Flaky::failing([ToolError::new("LEDGER_BUSY", "Ledger locked")
        .category(ErrorCategory::Transient)
        .explanation("lock held by nightly job")]);
    let (client, _log, _running) =
        client_for(&flaky, Exposition::Grouped, RetryPolicy::never()).await;
    let failure = failed(client.call("flaky.fetch", json!({})).await);
    assert_eq!(failure.flags().category, ErrorCategory::Transient);
    assert_eq!(
        failure.flags().explanation.as_deref(),
        Some("lock held by nightly job")
    );
    let parsed = failure.tool_error().unwrap();
    assert_eq!(parsed.error_category(), ErrorCategory::Transient);
    assert_eq!(parsed.explanation_text(), Some("lock held by nightly job"));
    assert_eq!(
        failure.decision(),
        &Decision::Abort(AbortReason::AttemptsExhausted)
    );
}
