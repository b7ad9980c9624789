//! [`Outcome`]: the result of a tester call, with assertions that read like the contract.

use std::fmt;

use serde_json::Value;

use crate::envelope::code::{ErrorCategory, ErrorCode, Severity};
use crate::envelope::error::ToolError;
use crate::model::response::ToolResponse;

/// The result of one [`Tester`](super::Tester) call: the [`ToolResponse`] a server would
/// render, and assertions on it; or a cancelled call, whose action was dropped and to which
/// a server would send no response.
///
/// Every assertion returns `&Self` so they chain, and panics at the caller's line with what
/// differed followed by the whole result ([`Outcome::snapshot`]). On a cancelled outcome,
/// every assertion but [`Outcome::assert_cancelled`] panics with "the call was cancelled".
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// `None` when the call was cancelled.
    response: Option<ToolResponse>,
}

/// The panic message of a cancelled outcome read as a response.
const CANCELLED: &str =
    "the call was cancelled: there is no response (check it with `Outcome::assert_cancelled`)";

impl Outcome {
    pub(super) fn new(response: ToolResponse) -> Outcome {
        Outcome {
            response: Some(response),
        }
    }

    pub(super) fn cancelled() -> Outcome {
        Outcome { response: None }
    }

    /// Whether the call was cancelled (the action's future was dropped).
    pub fn is_cancelled(&self) -> bool {
        self.response.is_none()
    }

    /// The response.
    ///
    /// # Panics
    /// When the call was cancelled ([`Outcome::is_cancelled`]): a cancelled call has no
    /// response.
    #[track_caller]
    pub fn response(&self) -> &ToolResponse {
        self.response.as_ref().expect(CANCELLED)
    }

    /// The response, by value.
    ///
    /// # Panics
    /// When the call was cancelled, as [`Outcome::response`].
    #[track_caller]
    pub fn into_response(self) -> ToolResponse {
        self.response.expect(CANCELLED)
    }

    /// A stable text of the result, for snapshot tests: every text block verbatim (a blank line
    /// between blocks), then `flags: {…}` as pretty JSON with the keys in the flags table's order (`flags:
    /// none` for a plain success). The value of an `errorId` detail reads `[error id]`. A
    /// cancelled call reads `cancelled`.
    pub fn snapshot(&self) -> String {
        match &self.response {
            Some(response) => super::render(response),
            None => "cancelled".to_owned(),
        }
    }

    /// Asserts that the call was cancelled: the context's cancellation token was cancelled
    /// before or while the action ran, and the action's future was dropped.
    #[track_caller]
    pub fn assert_cancelled(&self) -> &Self {
        if let Some(response) = &self.response {
            let kind = kind(response);
            self.fail(format_args!("expected a cancelled call, got {kind}"));
        }
        self
    }

    /// Asserts a success: a payload, with or without warnings riding next to it. A
    /// warning-severity error alone (`isError: false` but no payload) is not a success: check it
    /// with [`Outcome::assert_warning`].
    #[track_caller]
    pub fn assert_success(&self) -> &Self {
        if self.response().payload().is_none() {
            self.fail(format_args!("expected a success, got {}", self.kind()));
        }
        self
    }

    /// Asserts a success whose payload is exactly `expected`: for actions returning text
    /// (`String`, `&str`, `()` as `OK`), which is not JSON.
    #[track_caller]
    pub fn assert_text(&self, expected: &str) -> &Self {
        match self.response().payload() {
            Some(actual) if actual == expected => {}
            Some(actual) => self.fail(format_args!(
                "expected the text payload {expected:?}, got {actual:?}"
            )),
            None => self.fail(format_args!(
                "expected the text payload {expected:?}, got {}",
                self.kind()
            )),
        }
        self
    }

    /// Asserts a success whose payload is JSON equal to `expected`.
    #[track_caller]
    pub fn assert_json_eq(&self, expected: impl Into<Value>) -> &Self {
        let expected = expected.into();
        let actual = self.json();
        if actual != expected {
            self.fail(format_args!(
                "expected the JSON payload {expected}, got {actual}"
            ));
        }
        self
    }

    /// Asserts a success whose payload JSON contains `expected`: every key of an expected
    /// object is present with a matching value (extra keys are fine), arrays match element by
    /// element with the same length, other values are equal.
    #[track_caller]
    pub fn assert_json_contains(&self, expected: impl Into<Value>) -> &Self {
        let expected = expected.into();
        let actual = self.json();
        if let Some(diff) = contains(&actual, &expected, "$") {
            self.fail(format_args!(
                "expected the JSON payload to contain {expected}: {diff}"
            ));
        }
        self
    }

    /// Asserts an error (a `<tool_error>` of any severity, or a validation error, whose code
    /// is `VALIDATION_ERROR`) with the code `code`.
    #[track_caller]
    pub fn assert_error(&self, code: impl Into<ErrorCode>) -> &Self {
        let expected = code.into();
        let actual = self.error_flag("code");
        if actual.as_str() != Some(expected.as_str()) {
            self.fail(format_args!(
                "expected code {expected}, got {}",
                display(&actual)
            ));
        }
        self
    }

    /// Asserts the error's severity.
    #[track_caller]
    pub fn assert_severity(&self, severity: Severity) -> &Self {
        self.assert_flag("severity", Value::from(severity.as_str()))
    }

    /// Asserts the error's category (`errorCategory`).
    #[track_caller]
    pub fn assert_category(&self, category: ErrorCategory) -> &Self {
        self.assert_flag("errorCategory", Value::from(category.as_str()))
    }

    /// Asserts whether the error is retryable (`isRetryable`).
    #[track_caller]
    pub fn assert_retryable(&self, retryable: bool) -> &Self {
        self.assert_flag("isRetryable", Value::Bool(retryable))
    }

    /// Asserts the error's retry delay in seconds (`retryAfterSeconds`).
    #[track_caller]
    pub fn assert_retry_after(&self, secs: u64) -> &Self {
        self.assert_flag("retryAfterSeconds", Value::from(secs))
    }

    /// Asserts the `<tool_error>`'s recovery text, exactly.
    #[track_caller]
    pub fn assert_recovery(&self, expected: &str) -> &Self {
        let actual = self.tool_error("recovery").recovery();
        if actual != Some(expected) {
            self.fail(format_args!(
                "expected recovery {expected:?}, got {}",
                option(actual)
            ));
        }
        self
    }

    /// Asserts that the `<tool_error>`'s recovery text contains `text`.
    #[track_caller]
    pub fn assert_recovery_contains(&self, text: &str) -> &Self {
        let actual = self.tool_error("recovery").recovery();
        if !actual.is_some_and(|r| r.contains(text)) {
            self.fail(format_args!(
                "expected a recovery containing {text:?}, got {}",
                option(actual)
            ));
        }
        self
    }

    /// Asserts the `<tool_error>`'s available actions: exactly these, in this order.
    #[track_caller]
    pub fn assert_actions<I, S>(&self, expected: I) -> &Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let expected: Vec<String> = expected
            .into_iter()
            .map(|s| s.as_ref().to_owned())
            .collect();
        let actual = self.tool_error("available actions").available_actions();
        if actual != expected.as_slice() {
            self.fail(format_args!(
                "expected available actions {expected:?}, got {actual:?}"
            ));
        }
        self
    }

    /// Asserts that the `<tool_error>` has the detail `key` with the value `value`.
    #[track_caller]
    pub fn assert_detail(&self, key: &str, value: impl fmt::Display) -> &Self {
        let expected = value.to_string();
        let actual = self.tool_error("details").detail_value(key);
        if actual != Some(expected.as_str()) {
            self.fail(format_args!(
                "expected detail {key:?} = {expected:?}, got {}",
                option(actual)
            ));
        }
        self
    }

    /// Asserts a validation error whose problems name exactly these field paths (compared as
    /// sorted sets: `["id", "items[0].sku"]`).
    #[track_caller]
    pub fn assert_validation_fields<I, S>(&self, expected: I) -> &Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let Some(validation) = self.response().validation_error() else {
            self.fail(format_args!(
                "expected a validation error, got {}",
                self.kind()
            ));
        };
        let expected = sorted_set(expected);
        let actual = sorted_set(validation.problems().iter().map(|p| p.path()));
        if actual != expected {
            self.fail(format_args!(
                "expected validation problems on fields {expected:?}, got {actual:?}"
            ));
        }
        self
    }

    /// Asserts a warning with the code `code`: riding next to the result, or the result itself
    /// when it is a `<tool_error>` of severity `warning`.
    #[track_caller]
    pub fn assert_warning(&self, code: impl Into<ErrorCode>) -> &Self {
        let expected = code.into();
        let own = self
            .response()
            .tool_error()
            .filter(|e| e.severity_level() == Severity::Warning);
        let warnings: Vec<&ToolError> = own.into_iter().chain(self.response().warnings()).collect();
        if !warnings.iter().any(|w| w.code() == &expected) {
            let codes: Vec<&str> = warnings.iter().map(|w| w.code().as_str()).collect();
            self.fail(format_args!(
                "expected a warning {expected}, got warnings {codes:?}"
            ));
        }
        self
    }

    // --- helpers ---

    /// What the outcome is, for messages.
    #[track_caller]
    fn kind(&self) -> String {
        kind(self.response())
    }

    /// The success payload as JSON.
    #[track_caller]
    fn json(&self) -> Value {
        let Some(payload) = self.response().payload() else {
            self.fail(format_args!("expected a JSON success, got {}", self.kind()));
        };
        match serde_json::from_str(payload) {
            Ok(value) => value,
            Err(err) => self.fail(format_args!(
                "the payload is not JSON ({err}); for a text payload use `assert_text`"
            )),
        }
    }

    /// The `<tool_error>`, for an assertion on `part`.
    #[track_caller]
    fn tool_error(&self, part: &str) -> &ToolError {
        match self.response().tool_error() {
            Some(e) => e,
            None => self.fail(format_args!(
                "expected a tool error to check its {part}, got {}",
                self.kind()
            )),
        }
    }

    /// The flag `key` of the error (tool error or validation error); `null` when unset.
    #[track_caller]
    fn error_flag(&self, key: &str) -> Value {
        let flags = match (
            self.response().tool_error(),
            self.response().validation_error(),
        ) {
            (Some(e), _) => e.flags(),
            (None, Some(v)) => v.flags(),
            (None, None) => self.fail(format_args!("expected an error, got {}", self.kind())),
        };
        flags.get(key).cloned().unwrap_or(Value::Null)
    }

    #[track_caller]
    fn assert_flag(&self, key: &str, expected: Value) -> &Self {
        let actual = self.error_flag(key);
        if actual != expected {
            self.fail(format_args!(
                "expected {key} {}, got {}",
                display(&expected),
                display(&actual)
            ));
        }
        self
    }

    #[track_caller]
    fn fail(&self, what: fmt::Arguments<'_>) -> ! {
        panic!(
            "{what}\n\n--- result ---\n{}\n--------------",
            self.snapshot()
        )
    }
}

/// What a response is, for messages.
fn kind(response: &ToolResponse) -> String {
    if let Some(e) = response.tool_error() {
        format!("the error {} (severity {})", e.code(), e.severity_level())
    } else if response.validation_error().is_some() {
        "a validation error".to_owned()
    } else {
        "a success".to_owned()
    }
}

/// A flag value as read in messages: strings bare, `(unset)` for null.
fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "(unset)".to_owned(),
        other => other.to_string(),
    }
}

/// `items` as owned strings, sorted, each once.
fn sorted_set(items: impl IntoIterator<Item = impl AsRef<str>>) -> Vec<String> {
    let mut items: Vec<String> = (items.into_iter()).map(|s| s.as_ref().to_owned()).collect();
    items.sort();
    items.dedup();
    items
}

fn option(value: Option<&str>) -> String {
    value.map_or_else(|| "(none)".to_owned(), |v| format!("{v:?}"))
}

/// Where `actual` fails to contain `expected`, if it does.
fn contains(actual: &Value, expected: &Value, path: &str) -> Option<String> {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e.iter().find_map(|(key, e)| {
            let path = format!("{path}.{key}");
            match a.get(key) {
                Some(a) => contains(a, e, &path),
                None => Some(format!("{path} is missing")),
            }
        }),
        (Value::Array(a), Value::Array(e)) if a.len() == e.len() => a
            .iter()
            .zip(e)
            .enumerate()
            .find_map(|(i, (a, e))| contains(a, e, &format!("{path}[{i}]"))),
        (Value::Array(a), Value::Array(e)) => Some(format!(
            "{path} has {} elements, expected {}",
            a.len(),
            e.len()
        )),
        _ if actual == expected => None,
        _ => Some(format!("{path} is {actual}, expected {expected}")),
    }
}
