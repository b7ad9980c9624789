//! Cancellation: a cancelled call drops the action's future, and every assertion on a cancelled
//! outcome says the call was cancelled.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fusion::testing::Tester;
use fusion::{ErrorCategory, RequestContext, Severity};
use serde_json::json;

use super::support::{Check, not_found, panic_message};

/// Sets its flag when dropped.
struct DropGuard(Arc<AtomicBool>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A tool that never answers.
pub(crate) struct Sleeper {
    dropped: Arc<AtomicBool>,
}

/// Never answers.
#[fusion::tool]
impl Sleeper {
    /// Waits forever, ignoring cancellation: only dropping its future ends it.
    #[action]
    pub(crate) async fn wait(&self) -> String {
        let _guard = DropGuard(Arc::clone(&self.dropped));
        std::future::pending::<()>().await;
        unreachable!()
    }

    /// Answers at once.
    #[action(read_only)]
    pub(crate) fn now(&self) -> String {
        "now".to_owned()
    }
}

#[tokio::test]
async fn cancelling_while_the_action_runs_drops_its_future() {
    let dropped = Arc::new(AtomicBool::new(false));
    let t = Tester::new().tool(Sleeper {
        dropped: Arc::clone(&dropped),
    });
    let token = fusion::CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        canceller.cancel();
    });
    let ctx = RequestContext::new().with_cancellation(token);
    let outcome = tokio::time::timeout(
        Duration::from_secs(10),
        t.call_with("sleeper.wait", json!({}), ctx),
    )
    .await
    .expect("the cancelled call should end");
    outcome.assert_cancelled();
    assert!(outcome.is_cancelled());
    assert_eq!(outcome.snapshot(), "cancelled");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the action's future was not dropped"
    );
}

#[tokio::test]
async fn a_call_cancelled_before_it_runs_is_cancelled() {
    let t = Tester::new().tool(Sleeper {
        dropped: Arc::new(AtomicBool::new(false)),
    });
    let token = fusion::CancellationToken::new();
    token.cancel();
    let ctx = RequestContext::new().with_cancellation(token);
    t.call_with("sleeper_now", json!({}), ctx)
        .await
        .assert_cancelled();
}

#[tokio::test]
async fn assertions_on_a_cancelled_outcome_say_it_was_cancelled() {
    let t = Tester::new().tool(Sleeper {
        dropped: Arc::new(AtomicBool::new(false)),
    });
    let token = fusion::CancellationToken::new();
    token.cancel();
    let outcome = t
        .call_with(
            "sleeper.wait",
            json!({}),
            RequestContext::new().with_cancellation(token),
        )
        .await;
    let checks: Vec<Check> = vec![
        Box::new(|o| {
            let _ = o.assert_success();
        }),
        Box::new(|o| {
            let _ = o.assert_json_eq(1);
        }),
        Box::new(|o| {
            let _ = o.assert_json_contains(json!({}));
        }),
        Box::new(|o| {
            let _ = o.assert_error("NOT_FOUND");
        }),
        Box::new(|o| {
            let _ = o.assert_severity(Severity::Error);
        }),
        Box::new(|o| {
            let _ = o.assert_category(ErrorCategory::NotFound);
        }),
        Box::new(|o| {
            let _ = o.assert_retryable(false);
        }),
        Box::new(|o| {
            let _ = o.assert_retry_after(1);
        }),
        Box::new(|o| {
            let _ = o.assert_recovery("x");
        }),
        Box::new(|o| {
            let _ = o.assert_recovery_contains("x");
        }),
        Box::new(|o| {
            let _ = o.assert_actions(["x"]);
        }),
        Box::new(|o| {
            let _ = o.assert_detail("k", "v");
        }),
        Box::new(|o| {
            let _ = o.assert_validation_fields(["x"]);
        }),
        Box::new(|o| {
            let _ = o.assert_warning("DEPRECATED");
        }),
        Box::new(|o| {
            let _ = o.response();
        }),
        Box::new(|o| {
            let _ = o.clone().into_response();
        }),
    ];
    for check in checks {
        let message = panic_message(|| check(&outcome));
        assert!(message.contains("the call was cancelled"), "{message}");
    }
}

#[tokio::test]
async fn assert_cancelled_fails_on_an_answered_call() {
    let outcome = not_found().await;
    assert!(!outcome.is_cancelled());
    let message = panic_message(|| {
        outcome.assert_cancelled();
    });
    assert!(
        message.contains("expected a cancelled call, got the error NOT_FOUND"),
        "{message}"
    );
    assert!(message.contains("--- result ---"), "{message}");
}
