//! `Flags`: the typed flags object of an error, one serde type that the server renders
//! ([`ToolError::flags`], [`ValidationError::flags`](crate::ValidationError::flags)) and the
//! client reads back ([`Flags::from_value`]).

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::envelope::code::{ErrorCategory, ErrorCode, Severity};
use crate::envelope::error::ToolError;

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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Flags {
    /// The MCP `isError`: `false` for a warning severity.
    pub is_error: bool,
    /// The category: auth, rate_limit, not_found, validation, transient or unknown.
    #[serde(rename = "errorCategory", deserialize_with = "category_or_unknown")]
    pub category: ErrorCategory,
    /// Whether an identical retry can succeed.
    #[serde(rename = "isRetryable")]
    pub retryable: bool,
    /// The retry delay in whole seconds, when the server stated one.
    #[serde(
        rename = "retryAfterSeconds",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_seconds"
    )]
    pub retry_after_secs: Option<u64>,
    /// The code, as in the envelope.
    pub code: ErrorCode,
    /// The severity, as in the envelope.
    pub severity: Severity,
    /// For the human reading the audit log; the retry policy never reads it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "text"
    )]
    pub explanation: Option<String>,
}

/// A category this client does not know reads as `unknown`; it must still be a string.
fn category_or_unknown<'de, D: Deserializer<'de>>(d: D) -> Result<ErrorCategory, D::Error> {
    Ok(String::deserialize(d)?
        .parse()
        .unwrap_or(ErrorCategory::Unknown))
}

/// A delay that is no whole number of seconds above zero (a string, negative, `0`) reads as
/// unset.
fn whole_seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(Value::deserialize(d)?.as_u64().filter(|&s| s > 0))
}

/// An explanation that is not a string reads as unset.
fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Value::deserialize(d)?.as_str().map(str::to_owned))
}

impl Flags {
    /// The flags object of `_meta["fusion/error"]`, or `None` when `value` is not an object
    /// with `isError`, `errorCategory`, `isRetryable`, `code` and `severity` of the right JSON
    /// types and a known severity. A category this client does not know reads as `unknown`
    /// (uncategorised errors are not retried).
    pub fn from_value(value: &Value) -> Option<Flags> {
        // Not an array: serde would read a struct from one, field by field.
        if !value.is_object() {
            return None;
        }
        Flags::deserialize(value).ok()
    }

    /// The wire object, keys as in the table above (the inverse of [`Flags::from_value`]).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("flags are strings, booleans and integers")
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
