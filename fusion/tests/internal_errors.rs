//! Errors without a contract: the model sees an id, the log sees the cause.

use fusion::{ErrorCategory, ErrorCode, ToolError};

#[path = "support/captured.rs"]
mod captured;
use captured::Captured;

/// Runs `f` with a subscriber that records every event; returns `f`'s value and the log.
fn with_log<T>(f: impl FnOnce() -> T) -> (T, String) {
    let log = Captured::default();
    let subscriber = log.builder().finish();
    let value = tracing::subscriber::with_default(subscriber, f);
    (value, log.text())
}

const SECRET: &str = "postgres://billing:hunter2@10.0.0.7:5432/ledger";

fn assert_internal_envelope(err: &ToolError, log: &str) {
    assert_eq!(*err.code(), ErrorCode::InternalError);
    assert_eq!(err.error_category(), ErrorCategory::Unknown);
    assert!(!err.is_retryable());
    assert!(err.recovery().unwrap().starts_with("Do not retry"));
    let xml = err.to_xml();
    assert!(
        !xml.contains("hunter2"),
        "secret leaked into the envelope:\n{xml}"
    );
    assert!(
        !xml.contains("10.0.0.7"),
        "host leaked into the envelope:\n{xml}"
    );
    let flags = err.flags().to_string();
    assert!(
        !flags.contains("hunter2"),
        "secret leaked into the flags: {flags}"
    );

    let id = err.detail_value("errorId").expect("an error id detail");
    assert!(xml.contains(id));
    let line = log
        .lines()
        .find(|l| l.contains(id))
        .unwrap_or_else(|| panic!("the id {id} is not in the log:\n{log}"));
    assert!(
        line.contains(SECRET),
        "the cause is not logged with the id:\n{line}"
    );
    assert!(line.contains("ERROR"), "not logged at error level:\n{line}");
}

#[test]
fn anyhow_error_chain_is_logged_not_shown() {
    let (err, log) = with_log(|| {
        let cause =
            anyhow::anyhow!("connect {SECRET}: connection refused").context("loading invoices");
        ToolError::from(cause)
    });
    assert_internal_envelope(&err, &log);
    assert!(
        log.contains("loading invoices: connect"),
        "the chain is not logged:\n{log}"
    );
}

#[test]
fn boxed_error_is_logged_not_shown() {
    let (err, log) = with_log(|| {
        let boxed: Box<dyn std::error::Error + Send + Sync> = format!("dial {SECRET}").into();
        ToolError::from(boxed)
    });
    assert_internal_envelope(&err, &log);
}

#[test]
fn io_error_is_logged_not_shown() {
    let (err, log) = with_log(|| ToolError::from(std::io::Error::other(format!("open {SECRET}"))));
    assert_internal_envelope(&err, &log);
}

#[test]
fn caught_panic_is_logged_not_shown() {
    let (err, log) = with_log(|| {
        let payload =
            std::panic::catch_unwind(|| panic!("lost connection to {SECRET}")).unwrap_err();
        ToolError::from_panic(&*payload)
    });
    assert_internal_envelope(&err, &log);
}

#[test]
fn each_failure_gets_its_own_id() {
    let (ids, _) = with_log(|| {
        (0..3)
            .map(|_| {
                ToolError::from(anyhow::anyhow!("x"))
                    .detail_value("errorId")
                    .unwrap()
                    .to_owned()
            })
            .collect::<Vec<_>>()
    });
    assert_ne!(ids[0], ids[1]);
    assert_ne!(ids[1], ids[2]);
}

#[test]
fn contract_errors_pass_through_conversions_intact() {
    let original = ToolError::not_found("No invoice with that ID")
        .suggest("List invoices first")
        .actions(["billing.list_invoices"])
        .detail("requestedId", "inv_9")
        .critical();
    let via_anyhow = ToolError::from(anyhow::Error::new(original.clone()));
    assert_eq!(via_anyhow, original);
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(original.clone());
    assert_eq!(ToolError::from(boxed), original);
    assert_eq!(ToolError::from_internal(&original), original);
}
