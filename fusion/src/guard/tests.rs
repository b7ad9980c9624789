//! Unit tests of the guard runtime's pieces; the behaviour through servers and testers is in
//! `tests/guards.rs`.

use std::time::Duration;

use super::gates::timed_out;
use super::*;
use crate::model::context::RequestContext;
use crate::model::definition::ActionDefinition;
use crate::model::response::ToolResponse;

impl Guards {
    /// The gates of every tool of `tools` that has guards, by tool name.
    ///
    /// # Errors
    /// As [`Guards::check_targets`] and [`Guards::gates`].
    pub(super) fn build<'a>(
        &self,
        tools: impl IntoIterator<Item = (&'a ToolDefinition, ToolGuards)>,
    ) -> Result<HashMap<String, Gates>, String> {
        let tools: Vec<_> = tools.into_iter().collect();
        self.check_targets(tools.iter().map(|(d, _)| *d))?;
        let mut set = HashMap::new();
        for (definition, declared) in &tools {
            if let Some(gates) = self.gates(definition, declared)? {
                set.insert(definition.name.clone(), gates);
            }
        }
        Ok(set)
    }
}

/// A tool `name` with a discriminator and the bare `actions`.
pub(super) fn definition(name: &str, actions: &[&str]) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        description: String::new(),
        title: None,
        discriminator: Some("action".to_owned()),
        actions: actions.iter().map(|a| ActionDefinition::named(a)).collect(),
    }
}

/// The gates of a tool `billing` with `actions`, `spec` guarding `billing.charge`.
fn guarded(actions: &[&str], spec: GuardSpec) -> HashMap<String, Gates> {
    let billing = definition("billing", actions);
    let guards = Guards::new().guard("billing.charge", spec);
    guards.build([(&billing, ToolGuards::default())]).unwrap()
}

#[test]
fn whole_seconds_round_up_and_never_reach_zero() {
    assert_eq!(whole_seconds(Duration::ZERO), 1);
    assert_eq!(whole_seconds(Duration::from_millis(1)), 1);
    assert_eq!(whole_seconds(Duration::from_millis(1000)), 1);
    assert_eq!(whole_seconds(Duration::from_millis(1001)), 2);
    assert_eq!(whole_seconds(Duration::from_secs(20)), 20);
    assert_eq!(seconds(1), "1 second");
    assert_eq!(seconds(5), "5 seconds");
}

#[test]
fn builder_options_replace_attribute_options_one_by_one() {
    let declared = GuardSpec::new()
        .timeout(Duration::from_secs(5))
        .concurrency(ConcurrencyLimit::new(2, 3));
    let over = GuardSpec::new().timeout(Duration::from_secs(1));
    let merged = declared.overridden_by(&over);
    assert_eq!(merged.timeout, Some(Duration::from_secs(1)));
    assert_eq!(merged.concurrency, Some(ConcurrencyLimit::new(2, 3)));
    assert!(merged.rate_limit.is_none());
    assert_eq!(ConcurrencyLimit::new(0, 4).max_active, 1);
}

#[test]
fn building_checks_targets_and_limits() {
    let billing = definition("billing", &["charge", "refund"]);
    let build = |guards: Guards| guards.build([(&billing, ToolGuards::default())]);

    let unguarded = build(Guards::new()).unwrap();
    assert!(unguarded.is_empty(), "no gate for a tool without guards");

    let set = build(Guards::new().guard(
        "billing.charge",
        GuardSpec::new().timeout(Duration::from_secs(1)),
    ))
    .unwrap();
    let gates = &set["billing"];
    assert!(gates.tool.is_empty());
    assert_eq!(gates.actions["charge"].name, "billing.charge");
    assert!(!gates.actions.contains_key("refund"));

    let empty_rate = Guards::new().guard(
        "billing",
        GuardSpec::new().rate_limit(RateLimit::global(0, Duration::from_secs(1))),
    );
    let error = build(empty_rate).err().unwrap();
    assert!(error.contains("allows no call"), "{error}");

    let error = build(Guards::new().guard("billing.chrage", GuardSpec::new()))
        .err()
        .unwrap();
    assert_eq!(
        error,
        "guard target `billing.chrage` names no action of tool `billing`; actions: charge, refund"
    );
}

#[test]
fn timeouts_under_a_second_are_told_in_milliseconds() {
    let error = timed_out("billing.charge", Duration::from_millis(250), true);
    assert_eq!(
        error.message(),
        "`billing.charge` did not finish within 250 ms and was stopped."
    );
    assert_eq!(*error.code(), crate::ErrorCode::Timeout);
    assert_eq!(error.retry_after_secs(), None);
    let error = timed_out("billing", Duration::from_millis(1500), true);
    assert_eq!(
        error.message(),
        "`billing` did not finish within 2 seconds and was stopped."
    );
}

#[test]
fn a_timeout_is_retryable_only_for_read_only_or_idempotent_actions() {
    let mut tool = definition("billing", &["charge", "get", "cancel"]);
    tool.actions[1].annotations.read_only = Some(true);
    tool.actions[2].annotations.idempotent = Some(true);
    let safe: Vec<bool> = tool.actions.iter().map(retry_safe).collect();
    assert_eq!(safe, [false, true, true]);

    // The envelope: the flags and the recovery follow the action.
    let blind = timed_out("billing.charge", Duration::from_secs(10), false);
    assert_eq!(blind.flags()["isRetryable"], false);
    assert_eq!(blind.flags()["errorCategory"], "transient");
    assert!(
        blind
            .recovery()
            .unwrap()
            .contains("may already have taken effect"),
        "{blind:?}"
    );
    let again = timed_out("billing.get", Duration::from_secs(10), true);
    assert_eq!(again.flags()["isRetryable"], true);
    assert!(again.recovery().unwrap().starts_with("Retry once."));

    // The contract says the same, action by action, for a tool-wide timeout.
    let guards = ToolGuards {
        tool: GuardSpec::new().timeout(Duration::from_secs(10)),
        actions: Vec::new(),
    };
    let timeouts: Vec<(String, bool)> = tool
        .actions
        .iter()
        .flat_map(|a| {
            guards
                .error_contracts(a)
                .into_iter()
                .map(move |c| (format!("{} {}", a.name, c.code), c.retryable))
        })
        .collect();
    assert_eq!(
        timeouts,
        [
            ("charge TIMEOUT".to_owned(), false),
            ("get TIMEOUT".to_owned(), true),
            ("cancel TIMEOUT".to_owned(), true),
        ]
    );
    guards.declare_errors(&mut tool);
    assert!(!tool.actions[0].errors[0].retryable);
    assert!(tool.actions[1].errors[0].retryable);
}

#[test]
fn a_code_declared_with_the_same_flags_is_listed_once_with_other_flags_twice() {
    let timeout =
        |retryable| ErrorContract::new(ErrorCode::Timeout, Severity::Error, None, Some(retryable));
    // `charge` is neither read-only nor idempotent: its guard `TIMEOUT` is not retryable.
    let mut tool = definition("billing", &["charge", "cancel"]);
    tool.actions[0].errors = vec![timeout(true)];
    tool.actions[1].errors = vec![timeout(false)];
    let guards = ToolGuards {
        tool: GuardSpec::new().timeout(Duration::from_secs(10)),
        actions: Vec::new(),
    };
    guards.declare_errors(&mut tool);
    // The error type's own retryable TIMEOUT and the guard's: both can be sent.
    assert_eq!(tool.actions[0].errors, [timeout(true), timeout(false)]);
    // The same entry is not added twice.
    assert_eq!(tool.actions[1].errors, [timeout(false)]);
}

#[tokio::test(start_paused = true)]
async fn only_the_guarded_action_passes_through_guards() {
    let set = guarded(
        &["charge", "refund"],
        GuardSpec::new().timeout(Duration::from_millis(10)),
    );
    let gates = set.get("billing").unwrap();
    let slow = |_, _| async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        ToolResponse::text("ran")
    };
    let charge = gates
        .run("charge", Exposition::Grouped, RequestContext::new(), slow)
        .await;
    assert_eq!(charge.tool_error().unwrap().code(), &ErrorCode::Timeout);
    let refund = gates
        .run("refund", Exposition::Grouped, RequestContext::new(), slow)
        .await;
    assert_eq!(refund.payload(), Some("ran"));
}

/// A handler's drop guard: when dropped, it tries a second call through the same one-slot,
/// no-queue limit and records whether that call was refused (the slot still held).
struct TryAnotherCall {
    set: Arc<HashMap<String, Gates>>,
    refused: Arc<std::sync::Mutex<Option<bool>>>,
}

impl Drop for TryAnotherCall {
    fn drop(&mut self) {
        let gates = self.set.get("billing").unwrap();
        let second = gates.run(
            "charge",
            Exposition::Grouped,
            RequestContext::new(),
            |_, _| async { ToolResponse::text("second") },
        );
        let mut second = std::pin::pin!(second);
        let waker = std::task::Waker::noop();
        let outcome = second
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker));
        let refused = match outcome {
            std::task::Poll::Ready(response) => response.is_error(),
            std::task::Poll::Pending => false,
        };
        *self.refused.lock().unwrap() = Some(refused);
    }
}

#[tokio::test(start_paused = true)]
async fn a_slot_is_given_back_only_after_the_handler_is_dropped() {
    let set = Arc::new(guarded(
        &["charge"],
        GuardSpec::new()
            .concurrency(ConcurrencyLimit::new(1, 0))
            .timeout(Duration::from_secs(1)),
    ));

    // Completed, timed out, and cancelled while running.
    for case in ["completes", "times out", "is cancelled"] {
        let refused = Arc::new(std::sync::Mutex::new(None));
        let canary = TryAnotherCall {
            set: Arc::clone(&set),
            refused: Arc::clone(&refused),
        };
        let gates = set.get("billing").unwrap();
        // Through the handler a prepared call runs, which holds the slots.
        let prepared = crate::PreparedCall::new(move |_| async move {
            let _canary = canary;
            if case != "completes" {
                std::future::pending::<()>().await;
            }
            "first"
        });
        let call = gates.run(
            "charge",
            Exposition::Grouped,
            RequestContext::new(),
            |context, slots| prepared.run(context, slots, None),
        );
        match case {
            "is cancelled" => {
                let mut call = Box::pin(call);
                let waker = std::task::Waker::noop();
                let first = call
                    .as_mut()
                    .poll(&mut std::task::Context::from_waker(waker));
                assert!(first.is_pending(), "the handler is running");
                drop(call);
            }
            _ => drop(call.await),
        }
        assert_eq!(
            *refused.lock().unwrap(),
            Some(true),
            "when the handler {case}, its slot must still be held while it is dropped"
        );
    }
}

/// Runs a blocking handler that waits for `release`, through `gates`.
fn blocking_call(
    gates: &Gates,
    release: std::sync::mpsc::Receiver<()>,
) -> impl std::future::Future<Output = ToolResponse> + '_ {
    let prepared = crate::PreparedCall::blocking(move |_| {
        let _ = release.recv();
        "released"
    });
    gates.run(
        "charge",
        Exposition::Grouped,
        RequestContext::new(),
        |context, slots| prepared.run(context, slots, None),
    )
}

#[tokio::test]
async fn a_blocking_handler_past_its_timeout_keeps_its_slot_until_its_thread_returns() {
    let set = guarded(
        &["charge"],
        GuardSpec::new()
            .concurrency(ConcurrencyLimit::new(1, 0))
            .timeout(Duration::from_millis(20)),
    );
    let gates = set.get("billing").unwrap();
    let (release, held) = std::sync::mpsc::channel();
    let first = blocking_call(gates, held).await;
    assert_eq!(first.tool_error().unwrap().code(), &ErrorCode::Timeout);
    // Its thread still runs: the one slot is taken.
    let (_, unused) = std::sync::mpsc::channel();
    let second = blocking_call(gates, unused).await;
    assert_eq!(second.tool_error().unwrap().code(), &ErrorCode::ServerBusy);
    // Once the thread returns, the slot is free.
    release.send(()).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (again, held) = std::sync::mpsc::channel();
        again.send(()).unwrap();
        let third = blocking_call(gates, held).await;
        if third.payload() == Some("released") {
            break;
        }
        assert_eq!(third.tool_error().unwrap().code(), &ErrorCode::ServerBusy);
        assert!(
            std::time::Instant::now() < deadline,
            "the slot never came back"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
