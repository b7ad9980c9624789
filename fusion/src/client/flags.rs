//! `Flags`: the typed flags object of an error, read from a result or derived from an
//! envelope.

use std::time::Duration;

use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use crate::envelope::code::{ErrorCategory, ErrorCode, Severity};
use crate::envelope::error::ToolError;
use crate::model::response::FLAGS_META_KEY;

use super::envelope::Envelope;

/// The typed flags client code decides retry, escalate or abort from, as travelled in
/// `_meta["fusion/error"]`:
///
/// | field | wire key |
/// |---|---|
/// | [`is_error`](Flags::is_error) | `isError` |
/// | [`category`](Flags::category) | `errorCategory` |
/// | [`retryable`](Flags::retryable) | `isRetryable` |
/// | [`retry_after_secs`](Flags::retry_after_secs) | `retryAfterSeconds` (whole seconds, omitted when unset) |
/// | [`code`](Flags::code) | `code` |
/// | [`severity`](Flags::severity) | `severity` |
/// | [`explanation`](Flags::explanation) | `explanation` (omitted when unset; never for control flow) |
///
/// ```
/// use fusion::client::Flags;
/// use fusion::{ErrorCategory, ToolError};
///
/// let e = ToolError::rate_limited("Too many charges", 12);
/// let flags = Flags::from_value(&e.flags()).unwrap();
/// assert_eq!(flags, Flags::from(&e));
/// assert_eq!(flags.category, ErrorCategory::RateLimit);
/// assert_eq!(flags.retry_after_secs, Some(12));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Flags {
    /// The MCP `isError`: `false` for a warning severity.
    pub is_error: bool,
    /// The category: auth, rate_limit, not_found, validation, transient or unknown.
    pub category: ErrorCategory,
    /// Whether an identical retry can succeed.
    pub retryable: bool,
    /// The retry delay in whole seconds, when the server stated one.
    pub retry_after_secs: Option<u64>,
    /// The code, as in the envelope.
    pub code: ErrorCode,
    /// The severity, as in the envelope.
    pub severity: Severity,
    /// For the human reading the audit log; the retry policy never reads it.
    pub explanation: Option<String>,
}

impl Flags {
    /// The flags object of `_meta["fusion/error"]`, or `None` when `value` is not an object
    /// with `isError`, `errorCategory`, `isRetryable`, `code` and `severity` of the right JSON
    /// types and a known severity. A category this client does not know reads as `unknown`
    /// (uncategorised errors are not retried).
    pub fn from_value(value: &Value) -> Option<Flags> {
        let object = value.as_object()?;
        Some(Flags {
            is_error: object.get("isError")?.as_bool()?,
            category: object
                .get("errorCategory")?
                .as_str()?
                .parse()
                .unwrap_or(ErrorCategory::Unknown),
            retryable: object.get("isRetryable")?.as_bool()?,
            retry_after_secs: object
                .get("retryAfterSeconds")
                .and_then(Value::as_u64)
                .filter(|&s| s > 0),
            code: ErrorCode::from(object.get("code")?.as_str()?),
            severity: object.get("severity")?.as_str()?.parse().ok()?,
            explanation: object
                .get("explanation")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    /// The flags of `result`: its `_meta["fusion/error"]` when present and readable, else
    /// those derived from `envelope` ([`Envelope::flags`]), else `None`.
    pub fn of_result(result: &CallToolResult, envelope: Option<&Envelope>) -> Option<Flags> {
        result
            .meta
            .as_ref()
            .and_then(|meta| meta.0.get(FLAGS_META_KEY))
            .and_then(Flags::from_value)
            .or_else(|| envelope.map(Envelope::flags))
    }

    /// The flags of a `<validation_error>`: `VALIDATION_ERROR`, category
    /// validation, not retryable as-is, severity error.
    pub fn validation() -> Flags {
        Flags::not_retryable(ErrorCategory::Validation, ErrorCode::ValidationError)
    }

    /// The flags of an error result that carries no contract: neither flags nor a readable
    /// envelope. Treated like the server's errors without a contract: `INTERNAL_ERROR`,
    /// category unknown, not retryable.
    pub fn uncontracted() -> Flags {
        Flags::not_retryable(ErrorCategory::Unknown, ErrorCode::InternalError)
    }

    /// Severity error, no retry delay, no explanation.
    fn not_retryable(category: ErrorCategory, code: ErrorCode) -> Flags {
        Flags {
            is_error: true,
            category,
            retryable: false,
            retry_after_secs: None,
            code,
            severity: Severity::Error,
            explanation: None,
        }
    }

    /// The retry delay as a `Duration`, when stated.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after_secs.map(Duration::from_secs)
    }

    /// The wire object, keys as in the table above (the inverse of [`Flags::from_value`]).
    pub fn to_value(&self) -> Value {
        let mut flags = Map::with_capacity(7);
        flags.insert("isError".into(), Value::Bool(self.is_error));
        flags.insert("errorCategory".into(), Value::from(self.category.as_str()));
        flags.insert("isRetryable".into(), Value::Bool(self.retryable));
        if let Some(secs) = self.retry_after_secs {
            flags.insert("retryAfterSeconds".into(), Value::from(secs));
        }
        flags.insert("code".into(), Value::from(self.code.as_str()));
        flags.insert("severity".into(), Value::from(self.severity.as_str()));
        if let Some(explanation) = &self.explanation {
            flags.insert("explanation".into(), Value::from(explanation.as_str()));
        }
        Value::Object(flags)
    }

    /// `error` with the category, retryability and explanation of these flags, which the XML
    /// does not carry, so a parsed error answers [`ToolError::error_category`] and
    /// [`ToolError::is_retryable`] as the server decided. The envelope is unchanged.
    pub fn apply_to(&self, error: ToolError) -> ToolError {
        let error = error.category(self.category).retryable(self.retryable);
        match &self.explanation {
            Some(explanation) => error.explanation(explanation.as_str()),
            None => error,
        }
    }
}

impl From<&ToolError> for Flags {
    /// The flags [`ToolError::flags`] renders, typed.
    fn from(e: &ToolError) -> Flags {
        Flags {
            is_error: e.is_error(),
            category: e.error_category(),
            retryable: e.is_retryable(),
            retry_after_secs: e.retry_after_secs(),
            code: e.code().clone(),
            severity: e.severity_level(),
            explanation: e.explanation_text().map(str::to_owned),
        }
    }
}

impl Envelope {
    /// The flags derived from the envelope alone: code and severity as read,
    /// category and retryability by the code's defaults. A result's `_meta["fusion/error"]`
    /// states them exactly and is preferred when present ([`Flags::of_result`]).
    pub fn flags(&self) -> Flags {
        match self {
            Envelope::ToolError(e) => Flags::from(e),
            Envelope::Validation(_) => Flags::validation(),
        }
    }
}
