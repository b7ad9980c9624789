//! `fusion::client::RetryPolicy` on its own: every category's decision, exact waits, backoff
//! growth and cap, jitter bounds and determinism, the attempt and delay budgets.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion::client::{AbortReason, Decision, Flags, RetryPolicy};
use fusion::{ErrorCategory, ErrorCode, ToolError};

const ZERO: Duration = Duration::ZERO;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn flags(e: ToolError) -> Flags {
    Flags::from(&e)
}

fn exact() -> RetryPolicy {
    RetryPolicy::new()
        .jitter(0.0)
        .base_delay(ms(100))
        .max_delay(ms(800))
        .max_attempts(10)
        .max_total_delay(Duration::from_secs(60))
}

#[test]
fn each_category_gets_its_decision() {
    let policy = exact();
    let table: [(ToolError, Decision); 9] = [
        (ToolError::unauthorized("m"), Decision::Escalate),
        (ToolError::forbidden("m"), Decision::Escalate),
        (
            ToolError::new(ErrorCode::AuthRequired, "m"),
            Decision::Escalate,
        ),
        (
            ToolError::not_found("m"),
            Decision::Abort(AbortReason::Category(ErrorCategory::NotFound)),
        ),
        (
            ToolError::new(ErrorCode::ValidationError, "m"),
            Decision::Abort(AbortReason::Category(ErrorCategory::Validation)),
        ),
        (
            ToolError::internal("m"),
            Decision::Abort(AbortReason::Category(ErrorCategory::Unknown)),
        ),
        (
            ToolError::new("LEDGER_ODD", "m"),
            Decision::Abort(AbortReason::Category(ErrorCategory::Unknown)),
        ),
        (
            ToolError::rate_limited("m", 7),
            Decision::Retry {
                wait: Duration::from_secs(7),
            },
        ),
        (ToolError::timeout("m"), Decision::Retry { wait: ms(100) }),
    ];
    for (error, decision) in table {
        assert_eq!(
            policy.decide(&flags(error.clone()), 1, ZERO),
            decision,
            "{error:?}"
        );
    }
}

#[test]
fn flags_decide_not_prose() {
    let policy = exact();
    // Overridden flags win over the code's defaults, whatever the text says.
    let unknown_but_retryable = ToolError::new("LEDGER_ODD", "Temporary glitch, please retry!")
        .retryable(true)
        .explanation("retry immediately");
    assert_eq!(
        policy.decide(&flags(unknown_but_retryable), 1, ZERO),
        Decision::Abort(AbortReason::Category(ErrorCategory::Unknown)),
        "unknown is never retried"
    );
    let declared_transient = ToolError::new("LEDGER_BUSY", "Permanent failure, never retry")
        .category(ErrorCategory::Transient);
    assert_eq!(
        policy.decide(&flags(declared_transient), 1, ZERO),
        Decision::Retry { wait: ms(100) }
    );
    let transient_not_retryable = ToolError::timeout("m").retryable(false);
    assert_eq!(
        policy.decide(&flags(transient_not_retryable), 1, ZERO),
        Decision::Abort(AbortReason::NotRetryable)
    );
    let rate_limit_not_retryable = ToolError::rate_limited("m", 3).retryable(false);
    assert_eq!(
        policy.decide(&flags(rate_limit_not_retryable), 1, ZERO),
        Decision::Abort(AbortReason::NotRetryable)
    );
}

#[test]
fn backoff_doubles_then_caps() {
    let policy = exact();
    let busy = flags(ToolError::new(ErrorCode::ServerBusy, "m"));
    let waits: Vec<Option<Duration>> = (1..=7)
        .map(|attempt| policy.decide(&busy, attempt, ZERO).wait())
        .collect();
    let want = [100, 200, 400, 800, 800, 800, 800].map(|n| Some(ms(n)));
    assert_eq!(waits, want);
    // Huge attempt numbers saturate at the cap instead of overflowing.
    let policy = exact().max_attempts(u32::MAX);
    assert_eq!(policy.decide(&busy, 200, ZERO).wait(), Some(ms(800)));
}

#[test]
fn rate_limit_waits_exactly_the_stated_delay() {
    // Jitter and the backoff cap never touch a stated delay.
    let policy = RetryPolicy::new().jitter(1.0).max_delay(ms(10));
    for secs in [1, 2, 30] {
        let limited = flags(ToolError::rate_limited("m", secs));
        for attempt in 1..=3 {
            assert_eq!(
                policy.decide(&limited, attempt, ZERO),
                Decision::Retry {
                    wait: Duration::from_secs(secs)
                }
            );
        }
    }
    // Exactly, even when the backoff at that attempt would be longer.
    let slow = RetryPolicy::new()
        .base_delay(Duration::from_secs(5))
        .max_delay(Duration::from_secs(60))
        .max_total_delay(Duration::from_secs(600));
    let limited = flags(ToolError::rate_limited("m", 1));
    for attempt in 1..=3 {
        assert_eq!(
            slow.decide(&limited, attempt, ZERO),
            Decision::Retry {
                wait: Duration::from_secs(1)
            }
        );
    }
    // A rate limit without a stated delay falls back to backoff.
    let unstated = flags(ToolError::new(ErrorCode::RateLimited, "m"));
    assert_eq!(exact().decide(&unstated, 2, ZERO).wait(), Some(ms(200)));
}

#[test]
fn transient_waits_at_least_a_stated_delay() {
    let busy = flags(ToolError::new(ErrorCode::ServerBusy, "m").retry_after(2));
    assert_eq!(
        exact().decide(&busy, 1, ZERO).wait(),
        Some(Duration::from_secs(2))
    );
    let policy = exact()
        .base_delay(Duration::from_secs(5))
        .max_delay(Duration::from_secs(5));
    assert_eq!(
        policy.decide(&busy, 1, ZERO).wait(),
        Some(Duration::from_secs(5))
    );
}

#[test]
fn attempts_run_out() {
    let policy = exact().max_attempts(3);
    let timeout = flags(ToolError::timeout("m"));
    assert!(matches!(
        policy.decide(&timeout, 2, ZERO),
        Decision::Retry { .. }
    ));
    assert_eq!(
        policy.decide(&timeout, 3, ZERO),
        Decision::Abort(AbortReason::AttemptsExhausted)
    );
    // `never()` gives up at once, on retryable errors too.
    assert_eq!(
        RetryPolicy::never().decide(&timeout, 1, ZERO),
        Decision::Abort(AbortReason::AttemptsExhausted)
    );
    // Zero attempts is raised to one.
    assert_eq!(
        exact().max_attempts(0).decide(&timeout, 1, ZERO),
        Decision::Abort(AbortReason::AttemptsExhausted)
    );
}

#[test]
fn the_total_delay_budget_is_never_exceeded() {
    let policy = exact().max_total_delay(Duration::from_secs(10));
    let limited = flags(ToolError::rate_limited("m", 4));
    assert_eq!(
        policy.decide(&limited, 1, Duration::from_secs(6)),
        Decision::Retry {
            wait: Duration::from_secs(4)
        },
        "exactly at the budget is allowed"
    );
    assert_eq!(
        policy.decide(&limited, 1, Duration::from_secs(7)),
        Decision::Abort(AbortReason::DelayBudgetExhausted {
            wait: Duration::from_secs(4)
        })
    );
    let hour = flags(ToolError::rate_limited("m", 3600));
    assert_eq!(
        policy.decide(&hour, 1, ZERO),
        Decision::Abort(AbortReason::DelayBudgetExhausted {
            wait: Duration::from_secs(3600)
        })
    );
}

#[test]
fn critical_errors_are_not_retried_unless_asked() {
    let critical = flags(ToolError::timeout("m").critical());
    assert_eq!(
        exact().decide(&critical, 1, ZERO),
        Decision::Abort(AbortReason::Critical)
    );
    assert_eq!(
        exact().retry_critical(true).decide(&critical, 1, ZERO),
        Decision::Retry { wait: ms(100) }
    );
}

#[test]
fn jitter_stays_within_its_bounds() {
    let busy = flags(ToolError::new(ErrorCode::ServerBusy, "m"));
    for fraction in [0.25, 0.5, 1.0] {
        let policy = exact().jitter(fraction).jitter_seed(7);
        for attempt in 1..=6 {
            let full = ms(100 * (1 << (attempt - 1))).min(ms(800));
            for _ in 0..200 {
                let wait = policy.decide(&busy, attempt, ZERO).wait().unwrap();
                assert!(wait <= full, "{wait:?} > {full:?}");
                assert!(
                    wait >= full.mul_f64(1.0 - fraction),
                    "{wait:?} under the jitter floor of {full:?} at {fraction}"
                );
            }
        }
    }
}

#[test]
fn an_uncapped_backoff_never_panics() {
    // `max_delay(Duration::MAX)` reads as "no cap"; a wait near `Duration::MAX` must not
    // overflow when jittered (it used to panic in `Duration::mul_f64`).
    let busy = flags(ToolError::new(ErrorCode::ServerBusy, "m"));
    let max = Duration::MAX;
    for (draw, low, high) in [
        (0.0, max, max),
        (0.5, max / 3, max / 4 * 3),
        (0.999, ZERO, max / 500),
    ] {
        let policy = RetryPolicy::new()
            .max_attempts(u32::MAX)
            .base_delay(Duration::MAX)
            .max_delay(Duration::MAX)
            .max_total_delay(Duration::MAX)
            .jitter(1.0)
            .jitter_with(move || draw);
        for attempt in [1, 2, 64, u32::MAX - 1] {
            let wait = policy.decide(&busy, attempt, ZERO).wait().unwrap();
            assert!(low <= wait && wait <= high, "{wait:?} at draw {draw}");
        }
        // The budget still applies to those waits.
        let bounded = policy.clone().max_total_delay(Duration::from_secs(60));
        assert!(matches!(
            bounded.decide(&busy, 1, ZERO),
            Decision::Abort(AbortReason::DelayBudgetExhausted { .. })
        ));
    }
}

#[test]
fn jitter_is_deterministic_with_a_seed_or_a_source() {
    let busy = flags(ToolError::new(ErrorCode::ServerBusy, "m"));
    let draw = |policy: &RetryPolicy| -> Vec<Duration> {
        (1..=5)
            .map(|attempt| policy.decide(&busy, attempt, ZERO).wait().unwrap())
            .collect()
    };
    let seeded = || exact().jitter(0.5).jitter_seed(42);
    assert_eq!(draw(&seeded()), draw(&seeded()));
    assert_ne!(
        draw(&seeded()),
        draw(&exact().jitter(0.5)),
        "a random seed should differ (astronomically unlikely to collide)"
    );

    // An injected source: 0 keeps the full wait, 0.5 takes off half the jitter fraction.
    let values = Arc::new(Mutex::new(vec![0.0, 0.5, 0.999_999, 7.0, f64::NAN]));
    let source = Arc::clone(&values);
    let policy = exact()
        .jitter(0.5)
        .jitter_with(move || source.lock().unwrap().remove(0));
    let waits = draw(&policy);
    assert_eq!(
        waits,
        [
            ms(100), // draw 0: full
            ms(150), // 200 · (1 - 0.5 · 0.5)
            ms(400).mul_f64(1.0 - 0.5 * 0.999_999),
            ms(400), // 7.0 clamped to 1: 800 · 0.5
            ms(800), // NaN read as 0: full
        ]
    );
    assert!(values.lock().unwrap().is_empty());
}

#[test]
fn decisions_read_well_in_logs() {
    assert_eq!(
        Decision::Retry { wait: ms(1500) }.to_string(),
        "retry after 1500ms"
    );
    assert_eq!(
        Decision::Retry {
            wait: Duration::from_secs(2)
        }
        .to_string(),
        "retry after 2s"
    );
    assert_eq!(
        Decision::Retry {
            wait: Duration::from_nanos(231_813_394)
        }
        .to_string(),
        "retry after 232ms"
    );
    assert_eq!(Decision::Escalate.to_string(), "escalate");
    assert_eq!(
        Decision::Abort(AbortReason::Category(ErrorCategory::Validation)).to_string(),
        "abort: not retryable (validation)"
    );
    assert_eq!(Decision::Escalate.as_str(), "escalate");
}

#[test]
fn the_hook_observes_decisions_of_any_retry_loop() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let policy = exact().on_decision(move |event| {
        sink.lock().unwrap().push(format!(
            "{} #{} {} after {:?}: {}",
            event.name, event.attempt, event.flags.code, event.waited, event.decision
        ));
    });
    let limited = flags(ToolError::rate_limited("m", 2));
    let decision = policy.decide(&limited, 1, ms(100));
    policy.observe(&fusion::client::RetryEvent::new(
        "billing.charge",
        1,
        &limited,
        &decision,
        ms(100),
    ));
    // Clones share the hook.
    let clone = policy.clone();
    let denied = flags(ToolError::forbidden("m"));
    let decision = clone.decide(&denied, 2, ZERO);
    clone.observe(&fusion::client::RetryEvent::new(
        "billing.refund",
        2,
        &denied,
        &decision,
        ZERO,
    ));
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "billing.charge #1 RATE_LIMITED after 100ms: retry after 2s",
            "billing.refund #2 FORBIDDEN after 0ns: escalate",
        ]
    );
}
