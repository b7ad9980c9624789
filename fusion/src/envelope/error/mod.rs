//! `ToolError`: the error value, its consuming builder, its getters and typed flags. The
//! `<tool_error>` envelope writer is in `render`.

pub(crate) mod derive;
mod render;

use std::fmt;

use serde_json::Value;

use crate::envelope::code::{ErrorCategory, ErrorCode, Severity};
use crate::envelope::flags::Flags;

/// A tool error: the facts a language model needs to recover, and the flags client code
/// branches on.
///
/// `ToolError` *is* its own builder: every builder method consumes and returns
/// the error, so a finished chain can be returned from a handler as-is, with no `.build()`.
/// It is one pointer wide, so `Result<T, ToolError>` stays small.
///
/// ```
/// use fusion::{ErrorCategory, ToolError};
///
/// let err = ToolError::not_found("No invoice with that ID")
///     .suggest("List invoices first, then retry with a real ID")
///     .actions(["billing.list_invoices"])
///     .detail("requestedId", "inv_2026_9999")
///     .retry_after(30);
///
/// assert_eq!(
///     err.to_xml(),
///     "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
///      <message>No invoice with that ID</message>\n\
///      <recovery>List invoices first, then retry with a real ID</recovery>\n\
///      <available_actions>\n  <action>billing.list_invoices</action>\n</available_actions>\n\
///      <details>\n  <detail key=\"requestedId\">inv_2026_9999</detail>\n</details>\n\
///      <retry_after>30 seconds</retry_after>\n\
///      </tool_error>"
/// );
/// assert_eq!(err.error_category(), ErrorCategory::NotFound);
/// assert!(!err.is_retryable());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ToolError(Box<Inner>);

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    code: ErrorCode,
    severity: Severity,
    message: String,
    recovery: String,
    actions: Vec<String>,
    details: Vec<(String, String)>,
    retry_after: u64,
    category: Option<ErrorCategory>,
    retryable: Option<bool>,
    explanation: Option<String>,
}

impl ToolError {
    /// An error with a code and a message; every other section starts unset and the severity
    /// is `error`.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> ToolError {
        ToolError(Box::new(Inner {
            code: code.into(),
            severity: Severity::Error,
            message: message.into(),
            recovery: String::new(),
            actions: Vec::new(),
            details: Vec::new(),
            retry_after: 0,
            category: None,
            retryable: None,
            explanation: None,
        }))
    }

    // --- canonical constructors -------------------------------------------------------------

    /// `NOT_FOUND`: the requested entity does not exist. Add the actions that list what does.
    pub fn not_found(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::NotFound, message)
    }

    /// `CONFLICT`: the request conflicts with the current state.
    pub fn conflict(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::Conflict, message)
    }

    /// `UNAUTHORIZED`: the caller is not authenticated (category auth; never retried).
    pub fn unauthorized(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::Unauthorized, message)
            .suggest("Do not retry. Ask the user to sign in or provide valid credentials.")
    }

    /// `FORBIDDEN`: the caller is authenticated but not allowed (category auth).
    pub fn forbidden(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::Forbidden, message)
            .suggest("Do not retry. Tell the user they lack permission for this action.")
    }

    /// `RATE_LIMITED` with the delay, in whole seconds, until a call can succeed (at least 1:
    /// a delay of zero would tell the model to hammer the server, so it is raised to one).
    pub fn rate_limited(message: impl Into<String>, retry_after_secs: u64) -> ToolError {
        let secs = retry_after_secs.max(1);
        ToolError::new(ErrorCode::RateLimited, message)
            .suggest(format!(
                "Wait {secs} seconds, then send the same call again."
            ))
            .retry_after(secs)
    }

    /// `TIMEOUT`: the call ran out of time (category transient, retryable).
    pub fn timeout(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::Timeout, message)
            .suggest("Retry the call; if it times out again, ask for less data at once.")
    }

    /// `DEPRECATED` as a warning: the call succeeded, but the model should change how it
    /// calls (`isError: false`).
    pub fn deprecated(message: impl Into<String>) -> ToolError {
        ToolError::new(ErrorCode::Deprecated, message).warning()
    }

    /// `MISSING_REQUIRED_FIELD` for `field`, with the field name as the `field` detail.
    pub fn missing_required_field(field: &str) -> ToolError {
        ToolError::new(
            ErrorCode::MissingRequiredField,
            format!("Missing required field '{field}'."),
        )
        .suggest(format!("Add the field '{field}' and call the tool again."))
        .detail("field", field)
    }

    // --- builder ----------------------------------------------------------------------------

    /// Sets the recovery instruction (`<recovery>`): what the model should do next.
    /// An empty string removes the section.
    pub fn suggest(mut self, recovery: impl Into<String>) -> ToolError {
        self.0.recovery = recovery.into();
        self
    }

    /// Appends actions the model may call instead (`<available_actions>`), order kept:
    /// `tool.action` in grouped exposition, the callable tool name in flat exposition.
    pub fn actions<I>(mut self, actions: I) -> ToolError
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.0.actions.extend(actions.into_iter().map(Into::into));
        self
    }

    /// Replaces each available action for which `f` returns a name (order kept; the others
    /// stay as they are). A server in flat exposition, and a tester called by a flat name,
    /// give each `tool.action` its flat tool name this way.
    pub(crate) fn map_available_actions(mut self, f: impl Fn(&str) -> Option<String>) -> ToolError {
        for action in &mut self.0.actions {
            if let Some(renamed) = f(action) {
                *action = renamed;
            }
        }
        self
    }

    /// Sets the severity (default `error`).
    pub fn severity(mut self, severity: Severity) -> ToolError {
        self.0.severity = severity;
        self
    }

    /// Shorthand for `.severity(Severity::Warning)`: guidance on the success path.
    pub fn warning(self) -> ToolError {
        self.severity(Severity::Warning)
    }

    /// Shorthand for `.severity(Severity::Critical)`: failed, must not be retried blindly.
    pub fn critical(self) -> ToolError {
        self.severity(Severity::Critical)
    }

    /// Appends one detail (`<detail key="…">value</detail>`); details keep insertion order.
    pub fn detail(mut self, key: impl Into<String>, value: impl fmt::Display) -> ToolError {
        self.0.details.push((key.into(), value.to_string()));
        self
    }

    /// Appends several details in iteration order.
    pub fn with_details<I, K, V>(self, details: I) -> ToolError
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: fmt::Display,
    {
        (details.into_iter()).fold(self, |error, (key, value)| error.detail(key, value))
    }

    /// Sets the retry delay in whole seconds (`<retry_after>N seconds</retry_after>` and the
    /// `retryAfterSeconds` flag). Zero means unset: both are omitted.
    pub fn retry_after(mut self, secs: u64) -> ToolError {
        self.0.retry_after = secs;
        self
    }

    /// Overrides the category (default: per code, see [`ErrorCode::default_category`];
    /// `unknown` for custom codes).
    pub fn category(mut self, category: ErrorCategory) -> ToolError {
        self.0.category = Some(category);
        self
    }

    /// Overrides whether an identical retry can succeed (default: from the category).
    pub fn retryable(mut self, retryable: bool) -> ToolError {
        self.0.retryable = Some(retryable);
        self
    }

    /// Sets the explanation for the human reading the audit log. It travels in the flags
    /// only: never in the XML, never used for control flow.
    pub fn explanation(mut self, explanation: impl Into<String>) -> ToolError {
        self.0.explanation = Some(explanation.into());
        self
    }

    // --- getters ----------------------------------------------------------------------------

    /// The code.
    pub fn code(&self) -> &ErrorCode {
        &self.0.code
    }

    /// The severity.
    pub fn severity_level(&self) -> Severity {
        self.0.severity
    }

    /// The MCP `isError` value, from the severity.
    pub fn is_error(&self) -> bool {
        self.0.severity.is_error()
    }

    /// The message (possibly empty).
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The recovery instruction, if set and non-empty.
    pub fn recovery(&self) -> Option<&str> {
        Some(self.0.recovery.as_str()).filter(|r| !r.is_empty())
    }

    /// The available actions, in order.
    pub fn available_actions(&self) -> &[String] {
        &self.0.actions
    }

    /// The details as `(key, value)` pairs, in insertion order.
    pub fn details(&self) -> &[(String, String)] {
        &self.0.details
    }

    /// The value of the first detail named `key`.
    pub fn detail_value(&self, key: &str) -> Option<&str> {
        self.0
            .details
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The retry delay in whole seconds, when at least one second.
    pub fn retry_after_secs(&self) -> Option<u64> {
        Some(self.0.retry_after).filter(|&s| s > 0)
    }

    /// The category: the declared one, else the code's default, else `unknown`.
    pub fn error_category(&self) -> ErrorCategory {
        self.0
            .category
            .or_else(|| self.0.code.default_category())
            .unwrap_or(ErrorCategory::Unknown)
    }

    /// Whether the category came from neither a declaration nor a canonical code: a custom code
    /// nobody categorised. The server logs these.
    pub fn is_uncategorised(&self) -> bool {
        self.0.category.is_none() && self.0.code.default_category().is_none()
    }

    /// Whether an identical retry can succeed: the declared value, else the category's default.
    pub fn is_retryable(&self) -> bool {
        self.0
            .retryable
            .unwrap_or_else(|| self.error_category().is_retryable_by_default())
    }

    /// The audit-log explanation, if set.
    pub fn explanation_text(&self) -> Option<&str> {
        self.0.explanation.as_deref()
    }

    /// The typed flags object: `isError`, `errorCategory`,
    /// `isRetryable`, `retryAfterSeconds` (only when set), `code`, `severity` and
    /// `explanation` (only when set). This is what travels in `_meta["fusion/error"]`.
    ///
    /// ```
    /// use fusion::ToolError;
    /// use serde_json::json;
    ///
    /// let flags = ToolError::rate_limited("Too many charges", 12)
    ///     .explanation("tenant acme hit 10/min")
    ///     .flags();
    /// assert_eq!(flags, json!({
    ///     "isError": true,
    ///     "errorCategory": "rate_limit",
    ///     "isRetryable": true,
    ///     "retryAfterSeconds": 12,
    ///     "code": "RATE_LIMITED",
    ///     "severity": "error",
    ///     "explanation": "tenant acme hit 10/min",
    /// }));
    /// ```
    pub fn flags(&self) -> Value {
        Flags::from(self).to_value()
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &*self.0;
        let mut s = f.debug_struct("ToolError");
        s.field("code", &e.code.as_str())
            .field("severity", &e.severity)
            .field("message", &e.message);
        if !e.recovery.is_empty() {
            s.field("recovery", &e.recovery);
        }
        if !e.actions.is_empty() {
            s.field("actions", &e.actions);
        }
        if !e.details.is_empty() {
            s.field("details", &e.details);
        }
        if e.retry_after > 0 {
            s.field("retry_after", &e.retry_after);
        }
        if let Some(c) = e.category {
            s.field("category", &c);
        }
        if let Some(r) = e.retryable {
            s.field("retryable", &r);
        }
        if let Some(x) = &e.explanation {
            s.field("explanation", x);
        }
        s.finish()
    }
}

/// `CODE: message`, for logs and `anyhow` chains. The model sees [`ToolError::to_xml`].
impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.code, self.0.message)
    }
}

impl std::error::Error for ToolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limited_never_says_zero() {
        let e = ToolError::rate_limited("slow down", 0);
        assert_eq!(e.retry_after_secs(), Some(1));
        assert!(e.to_xml().contains("<retry_after>1 seconds</retry_after>"));
    }

    #[test]
    fn builder_overrides_category_and_retryable() {
        let e = ToolError::conflict("busy").category(ErrorCategory::Transient);
        assert!(e.is_retryable());
        let e = e.retryable(false);
        assert!(!e.is_retryable());
        assert!(!e.is_uncategorised());
        assert!(ToolError::new("ALREADY_PAID", "x").is_uncategorised());
    }

    #[test]
    fn tool_error_is_one_pointer_wide() {
        assert_eq!(
            std::mem::size_of::<ToolError>(),
            std::mem::size_of::<usize>()
        );
    }
}
