//! Errors without a contract: `anyhow` errors, boxed `std::error::Error`s and panics become
//! `INTERNAL_ERROR` envelopes whose cause goes to the log, never to the model.
//!
//! The model sees a fixed message, a recovery that
//! says not to retry blindly and an error id (the `errorId` detail); the server log
//! (`tracing`, target `fusion::internal`, level `ERROR`) gets the same id and the whole error
//! chain. Connection strings, paths and stack traces stay on the server.
//!
//! The log gets the cause verbatim, secrets and all, unless the server answering the call
//! rewrites it first: see
//! [`Server::redact_internal_causes`](crate::server::Server::redact_internal_causes).
//!
//! A [`ToolError`] that travelled inside an `anyhow::Error` or a `Box<dyn Error>` is recovered
//! intact: code, severity and every section survive the trip.
//!
//! ```
//! use fusion::{ErrorCode, ToolError};
//!
//! let cause = anyhow::anyhow!("connect postgres://admin:hunter2@db/ledger: refused");
//! let err = ToolError::from(cause);
//! assert_eq!(*err.code(), ErrorCode::InternalError);
//! assert!(!err.to_xml().contains("hunter2"));
//! assert!(err.detail_value("errorId").unwrap().starts_with("err_"));
//!
//! // A contract error wrapped in anyhow comes back as it was.
//! let wrapped = anyhow::Error::new(ToolError::not_found("No such invoice"));
//! assert_eq!(*ToolError::from(wrapped).code(), ErrorCode::NotFound);
//! ```

use std::any::Any;
use std::borrow::Cow;
use std::error::Error;
use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::envelope::code::{ErrorCategory, ErrorCode};
use crate::envelope::error::ToolError;

/// The message the model sees for every error without a contract.
pub const MESSAGE: &str = "The server hit an unexpected internal error.";

/// The recovery the model sees for every error without a contract.
pub const RECOVERY: &str = "Do not retry this call blindly. Tell the user the action failed \
     and quote the errorId detail, or try a different action.";

/// The detail key that carries the error id.
pub const ERROR_ID_KEY: &str = "errorId";

/// A fresh error id: `err_` and 16 lowercase hex digits, unique within the process and
/// unpredictable across processes (the hash of a counter under a randomly keyed hasher).
pub fn new_error_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!("err_{:016x}", hasher.finish())
}

/// What a server does to the cause of an internal error before it is logged (see
/// [`Server::redact_internal_causes`](crate::server::Server::redact_internal_causes)).
pub(crate) type Redactor = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// Logged instead of a cause whose redactor panicked: the cause is withheld, never logged as
/// it was.
const REDACTOR_PANICKED: &str = "(cause withheld: the redactor panicked)";

tokio::task_local! {
    /// The redactor of the server whose call is being polled.
    static REDACTOR: Redactor;
}

/// Runs `future` with `redactor` applied to every cause logged while it is polled, as the
/// call's `tracing` span is entered on each poll; `None` logs causes as they are.
pub(crate) async fn redacting<F: Future>(redactor: Option<Redactor>, future: F) -> F::Output {
    match redactor {
        Some(redactor) => REDACTOR.scope(redactor, future).await,
        None => future.await,
    }
}

/// The redactor in force here, to carry to a thread of the call's own (a blocking handler's).
pub(crate) fn current_redactor() -> Option<Redactor> {
    REDACTOR.try_with(Arc::clone).ok()
}

/// Runs `f` with `redactor` in force (the blocking handler's side of [`current_redactor`]).
pub(crate) fn redacting_sync<R>(redactor: Option<Redactor>, f: impl FnOnce() -> R) -> R {
    match redactor {
        Some(redactor) => REDACTOR.sync_scope(redactor, f),
        None => f(),
    }
}

/// `cause` as the log gets it: rewritten by the redactor in force, if any. A redactor that
/// panics gives [`REDACTOR_PANICKED`]: its panic must not escape the code that is reporting an
/// error (the panic boundary itself, for a caught panic).
pub(crate) fn redacted(cause: &str) -> Cow<'_, str> {
    match REDACTOR.try_with(|redact| catch_unwind(AssertUnwindSafe(|| redact(cause)))) {
        Err(_not_in_a_call) => Cow::Borrowed(cause),
        Ok(Ok(redacted)) => Cow::Owned(redacted),
        Ok(Err(payload)) => {
            // Dropped under a guard too, as the call path drops a caught panic's payload.
            if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
                std::mem::forget(again);
            }
            Cow::Borrowed(REDACTOR_PANICKED)
        }
    }
}

/// Builds the envelope the model sees and logs `cause` (redacted, see [`redacted`]) with the
/// same id.
fn contractless(kind: &'static str, cause: &str) -> ToolError {
    let id = new_error_id();
    let cause: &str = &redacted(cause);
    tracing::error!(
        target: "fusion::internal",
        error_id = %id,
        kind,
        cause,
        "tool call failed with an error that has no contract"
    );
    ToolError::new(ErrorCode::InternalError, MESSAGE)
        .suggest(RECOVERY)
        .category(ErrorCategory::Unknown)
        .retryable(false)
        .detail(ERROR_ID_KEY, id)
}

/// The error and all its sources, joined by `": "` (the `anyhow` `{:#}` form).
fn chain(err: &(dyn Error + 'static)) -> String {
    let mut text = err.to_string();
    for cause in std::iter::successors(err.source(), |&cause| cause.source()) {
        let _ = write!(text, ": {cause}");
    }
    text
}

impl ToolError {
    /// `INTERNAL_ERROR` with a message you chose to show the model, and the recovery every
    /// error without a contract gets ([`RECOVERY`]). For errors that come from code or
    /// dependencies, use the conversions below instead: they log the cause and never put its
    /// text into the envelope.
    pub fn internal(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::InternalError, message).suggest(RECOVERY)
    }

    /// `INTERNAL_ERROR` for any error without a contract; the chain is logged with the id.
    ///
    /// If `err` is itself a [`ToolError`], it is returned unchanged (cloned).
    pub fn from_internal(err: &(dyn Error + 'static)) -> ToolError {
        match err.downcast_ref::<ToolError>() {
            Some(contract) => contract.clone(),
            None => contractless("error", &chain(err)),
        }
    }

    /// `INTERNAL_ERROR` for a caught panic (the payload of
    /// [`std::panic::catch_unwind`]); the panic message is logged with the id.
    pub fn from_panic(payload: &(dyn Any + Send)) -> ToolError {
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("a panic payload that is not a string");
        contractless("panic", message)
    }
}

/// `INTERNAL_ERROR` for a value that only implements `Display` (a `#[tool_error(internal)]`
/// variant of a type that is not a `std::error::Error`); the text is logged with the id.
pub fn from_display(value: &dyn std::fmt::Display) -> ToolError {
    contractless("error", &value.to_string())
}

impl From<anyhow::Error> for ToolError {
    fn from(err: anyhow::Error) -> ToolError {
        match err.downcast::<ToolError>() {
            Ok(contract) => contract,
            Err(err) => contractless("error", &format!("{err:#}")),
        }
    }
}

impl From<Box<dyn Error + Send + Sync>> for ToolError {
    fn from(err: Box<dyn Error + Send + Sync>) -> ToolError {
        ToolError::from(err as Box<dyn Error>)
    }
}

impl From<Box<dyn Error>> for ToolError {
    fn from(err: Box<dyn Error>) -> ToolError {
        match err.downcast::<ToolError>() {
            Ok(contract) => *contract,
            Err(err) => contractless("error", &chain(&*err)),
        }
    }
}

impl From<std::io::Error> for ToolError {
    fn from(err: std::io::Error) -> ToolError {
        ToolError::from_internal(&err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_and_well_formed() {
        let a = new_error_id();
        let b = new_error_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 20);
        assert!(
            a[4..]
                .bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
    }

    #[test]
    fn boxed_tool_error_survives() {
        let boxed: Box<dyn Error + Send + Sync> =
            Box::new(ToolError::rate_limited("slow", 7).critical());
        let back = ToolError::from(boxed);
        assert_eq!(*back.code(), ErrorCode::RateLimited);
        assert_eq!(back.retry_after_secs(), Some(7));
        assert!(back.detail_value(ERROR_ID_KEY).is_none());
    }

    #[test]
    fn chain_joins_sources() {
        let io = std::io::Error::other("disk full");
        let outer = anyhow::Error::new(io).context("writing ledger");
        let inner: &(dyn Error + 'static) = outer.as_ref();
        assert_eq!(chain(inner), "writing ledger: disk full");
    }

    #[test]
    fn panic_payloads_of_both_string_kinds() {
        let err = ToolError::from_panic(&"boom");
        assert_eq!(*err.code(), ErrorCode::InternalError);
        let err = ToolError::from_panic(&String::from("boom"));
        assert!(!err.is_retryable());
        assert_eq!(err.error_category(), ErrorCategory::Unknown);
    }
}
