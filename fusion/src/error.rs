//! `ToolError`: the error value, its consuming builder, and the `<tool_error>` envelope writer.

use std::fmt;

use serde_json::{Map, Value};

use crate::code::{ErrorCategory, ErrorCode, Severity};
use crate::xml::{self, Context};

/// A tool error: the facts a language model needs to recover, and the flags client code
/// branches on.
///
/// `ToolError` *is* its own builder (SPEC section 1): every builder method consumes and returns
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
    /// stay as they are). The tester uses it to give a call by a flat name the flat names a
    /// server in flat exposition would send.
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
    pub fn with_details<I, K, V>(mut self, details: I) -> ToolError
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: fmt::Display,
    {
        self.0
            .details
            .extend(details.into_iter().map(|(k, v)| (k.into(), v.to_string())));
        self
    }

    /// Sets the retry delay in whole seconds (`<retry_after>N seconds</retry_after>` and the
    /// `retryAfterSeconds` flag). Zero means unset: both are omitted.
    pub fn retry_after(mut self, secs: u64) -> ToolError {
        self.0.retry_after = secs;
        self
    }

    /// Overrides the category (default: per code, SPEC section 1; `unknown` for custom codes).
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
    /// nobody categorised. The server logs these (SPEC section 1).
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

    // --- rendering --------------------------------------------------------------------------

    /// The `<tool_error>` envelope, byte-exact (SPEC section 1). Sized exactly, in one
    /// allocation.
    ///
    /// One walk sums the lengths of the fixed parts and of the strings as they are, and scans
    /// the strings; when none needs escaping (the common case) that sum is exact and the
    /// strings are copied with no second look. Otherwise the envelope is measured exactly
    /// (escaped lengths) and written out of line, escaping the strings that need it.
    pub fn to_xml(&self) -> String {
        let (len, all_plain) = self.raw_len();
        if all_plain {
            self.write_plain(String::with_capacity(len))
        } else {
            self.write_escaping(String::with_capacity(self.escaped_xml_len()))
        }
    }

    /// Appends the envelope to `out`, for callers that reuse a buffer (grows it at most once).
    pub fn write_xml(&self, out: &mut String) {
        let (len, all_plain) = self.raw_len();
        *out = if all_plain {
            out.reserve(len);
            self.write_plain(std::mem::take(out))
        } else {
            out.reserve(self.escaped_xml_len());
            self.write_escaping(std::mem::take(out))
        };
    }

    /// The length of the envelope with every string as it is, and whether that is its exact
    /// length: whether no string needs escaping, found by one [`xml::Scan`] in the same walk.
    #[inline(always)]
    fn raw_len(&self) -> (usize, bool) {
        let mut scan = xml::Scan::new();
        // Inlined, so each string's scan is inlined too: left to itself, the compiler keeps
        // the closure out of line and calls it for each string.
        let len = self.xml_len(
            #[inline(always)]
            |s, ctx| {
                scan.add(s, ctx);
                s.len()
            },
        );
        (len, scan.all_plain())
    }

    /// The exact length of the envelope when a string needs escaping (out of line: the
    /// common case never needs it).
    #[inline(never)]
    fn escaped_xml_len(&self) -> usize {
        self.xml_len(xml::measured_len)
    }

    /// [`ToolError::write_sections`] when no string needs escaping: no scan at all. Inlined
    /// into `to_xml`, where the call and handing the buffer over cost more than the code.
    #[inline(always)]
    fn write_plain(&self, out: String) -> String {
        self.write_sections(xml::Writer::presized(out, true))
    }

    /// [`ToolError::write_sections`] when a string needs escaping: each is scanned again
    /// before it is copied, and the ones that are not plain are escaped.
    #[inline(never)]
    fn write_escaping(&self, out: String) -> String {
        self.write_sections(xml::Writer::presized(out, false))
    }

    /// Writes the envelope with `w`, whose buffer has room for it.
    ///
    /// The fixed text between two variable parts is written as one literal wherever the next
    /// part is known: one opening per canonical code, one per severity, one per list item, and
    /// one per pair of adjacent sections (see [`push_joint`]), so the renderer makes about as
    /// few copies as there are variable parts.
    #[inline(always)]
    fn write_sections(&self, mut w: xml::Writer) -> String {
        let e = &*self.0;
        if !e.code.push_open_tag(|tag| w.literal(tag)) {
            w.literal("<tool_error code=\"");
            w.attr(e.code.as_str());
        }
        // Must match `Severity::as_str` (the test `severity_literals_match_the_wire_strings`).
        match e.severity {
            Severity::Warning => w.literal("\" severity=\"warning\">\n<message>"),
            Severity::Error => w.literal("\" severity=\"error\">\n<message>"),
            Severity::Critical => w.literal("\" severity=\"critical\">\n<message>"),
        }
        w.text(&e.message);
        let mut section = Section::Message;
        if !e.recovery.is_empty() {
            push_joint(&mut w, section, Section::Recovery);
            w.text(&e.recovery);
            section = Section::Recovery;
        }
        if let Some((first, rest)) = e.actions.split_first() {
            push_joint(&mut w, section, Section::Actions);
            w.text(first);
            for action in rest {
                w.literal("</action>\n  <action>");
                w.text(action);
            }
            section = Section::Actions;
        }
        if let Some(((first_key, first_value), rest)) = e.details.split_first() {
            push_joint(&mut w, section, Section::Details);
            w.attr(first_key);
            w.literal("\">");
            w.text(first_value);
            for (key, value) in rest {
                w.literal("</detail>\n  <detail key=\"");
                w.attr(key);
                w.literal("\">");
                w.text(value);
            }
            section = Section::Details;
        }
        if e.retry_after > 0 {
            push_joint(&mut w, section, Section::RetryAfter);
            push_decimal(&mut w, e.retry_after);
            section = Section::RetryAfter;
        }
        push_joint(&mut w, section, Section::End);
        w.finish()
    }

    /// The length in bytes of [`ToolError::to_xml`]'s output, with `len` giving the length of
    /// each string as written: its escaped length ([`xml::measured_len`]) for the exact length,
    /// or its own length, which is exact when nothing needs escaping ([`ToolError::raw_len`]).
    #[inline(always)]
    fn xml_len(&self, mut len: impl FnMut(&str, Context) -> usize) -> usize {
        // Fixed parts, counted from the sections' literals (see `push_joint`).
        const OPEN: usize = "<tool_error code=\"\" severity=\"\">\n<message></message>\n".len();
        const CLOSE: usize = "</tool_error>".len();
        const RECOVERY: usize = "<recovery></recovery>\n".len();
        const ACTIONS: usize = "<available_actions>\n</available_actions>\n".len();
        const ACTION: usize = "  <action></action>\n".len();
        const DETAILS: usize = "<details>\n</details>\n".len();
        const DETAIL: usize = "  <detail key=\"\"></detail>\n".len();
        const RETRY: usize = "<retry_after> seconds</retry_after>\n".len();

        let e = &*self.0;
        let code = match &e.code {
            ErrorCode::Custom(code) => len(code, Context::Attr),
            canonical => canonical.as_str().len(),
        };
        let mut total =
            OPEN + CLOSE + code + e.severity.as_str().len() + len(&e.message, Context::Text);
        if !e.recovery.is_empty() {
            total += RECOVERY + len(&e.recovery, Context::Text);
        }
        // The first item apart, as the writer does: a loop over the rest is skipped at once
        // when there is only one item (the common case), where a loop over all of them would
        // first work out how often to run its unrolled body.
        if let Some((first, rest)) = e.actions.split_first() {
            total += ACTIONS + ACTION + len(first, Context::Text);
            for action in rest {
                total += ACTION + len(action, Context::Text);
            }
        }
        if let Some(((first_key, first_value), rest)) = e.details.split_first() {
            total +=
                DETAILS + DETAIL + len(first_key, Context::Attr) + len(first_value, Context::Text);
            for (key, value) in rest {
                total += DETAIL + len(key, Context::Attr) + len(value, Context::Text);
            }
        }
        if e.retry_after > 0 {
            total += RETRY + decimal_len(e.retry_after);
        }
        total
    }

    /// The typed flags object (SPEC section 1, from the kata): `isError`, `errorCategory`,
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
        let mut flags = Map::with_capacity(7);
        flags.insert("isError".into(), Value::Bool(self.is_error()));
        flags.insert(
            "errorCategory".into(),
            Value::from(self.error_category().as_str()),
        );
        flags.insert("isRetryable".into(), Value::Bool(self.is_retryable()));
        if let Some(secs) = self.retry_after_secs() {
            flags.insert("retryAfterSeconds".into(), Value::from(secs));
        }
        flags.insert("code".into(), Value::from(self.0.code.as_str()));
        flags.insert("severity".into(), Value::from(self.0.severity.as_str()));
        if let Some(explanation) = &self.0.explanation {
            flags.insert("explanation".into(), Value::from(explanation.as_str()));
        }
        Value::Object(flags)
    }
}

/// The sections of a `<tool_error>` envelope from the message on, in order. Every one after
/// the message is optional, so which section follows another is known only at run time.
#[derive(Clone, Copy)]
enum Section {
    Message,
    Recovery,
    Actions,
    Details,
    RetryAfter,
    /// The closing tag.
    End,
}

/// The closing text of a section (after its last variable part) as a literal.
macro_rules! close {
    (Message) => {
        "</message>\n"
    };
    (Recovery) => {
        "</recovery>\n"
    };
    (Actions) => {
        "</action>\n</available_actions>\n"
    };
    (Details) => {
        "</detail>\n</details>\n"
    };
    (RetryAfter) => {
        " seconds</retry_after>\n"
    };
}

/// The opening text of a section (up to its first variable part) as a literal.
macro_rules! open {
    (Recovery) => {
        "<recovery>"
    };
    (Actions) => {
        "<available_actions>\n  <action>"
    };
    (Details) => {
        "<details>\n  <detail key=\""
    };
    (RetryAfter) => {
        "<retry_after>"
    };
    (End) => {
        "</tool_error>"
    };
}

/// Appends the end of section `prev` and the start of section `next` as one constant-size
/// literal per pair (a literal selected from a table would be copied by a `memcpy` call).
/// `next` is a constant at every call site and `prev` one of a few constants, so after inlining
/// each call site jumps straight to its arms.
#[inline(always)]
fn push_joint(w: &mut xml::Writer, prev: Section, next: Section) {
    /// One arm per pair of a section and a later one, its literal built from `close!` and
    /// `open!`.
    macro_rules! joints {
        ($($prev:ident => $($next:ident)*;)*) => {
            match (prev, next) {
                $($( (Section::$prev, Section::$next) => {
                    w.literal(concat!(close!($prev), open!($next)))
                } )*)*
                _ => unreachable!("sections are written in order"),
            }
        };
    }
    joints! {
        Message => Recovery Actions Details RetryAfter End;
        Recovery => Actions Details RetryAfter End;
        Actions => Details RetryAfter End;
        Details => RetryAfter End;
        RetryAfter => End;
    }
}

/// Appends the decimal digits of `n` without going through `fmt`. One or two digits (the usual
/// delay in seconds) take a short path.
#[inline(always)]
fn push_decimal(w: &mut xml::Writer, n: u64) {
    if n < 100 {
        if n >= 10 {
            w.ascii(b'0' + (n / 10) as u8);
        }
        w.ascii(b'0' + (n % 10) as u8);
    } else {
        w.literal(decimal(n, &mut [0; 20]));
    }
}

/// The decimal digits of `n`, written into the end of `digits`: for numbers of three digits
/// or more, rare enough that checking the digits as UTF-8 costs nothing that matters.
#[inline(never)]
fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &str {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&digits[i..]).expect("ASCII digits")
}

/// The number of decimal digits of `n`, with the same short path as [`push_decimal`].
#[inline(always)]
fn decimal_len(n: u64) -> usize {
    match n {
        0..=9 => 1,
        10..=99 => 2,
        _ => n.ilog10() as usize + 1,
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
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn decimal_rendering() {
        for n in [1u64, 9, 10, 99, 100, 30, 12345, u64::MAX] {
            assert_eq!(decimal(n, &mut [0; 20]), n.to_string());
            // Into an empty buffer, so every digit goes through the growing path.
            let mut w = xml::Writer::presized(String::new(), true);
            push_decimal(&mut w, n);
            let s = w.finish();
            assert_eq!(s, n.to_string());
            assert_eq!(decimal_len(n), s.len());
        }
    }

    #[test]
    fn to_xml_is_sized_exactly_plain_or_escaped() {
        let plain = ToolError::not_found("No invoice with that ID")
            .suggest("List invoices first, then retry with a real ID")
            .actions(["billing.list_invoices"])
            .detail("requestedId", "inv_2026_9999")
            .retry_after(30);
        let escaped = ToolError::new("A\"<", "x & y < z")
            .suggest("r")
            .actions(["a", "b<"])
            .detail("k'", "v&")
            .retry_after(1234);
        for e in [plain, escaped] {
            let xml = e.to_xml();
            assert_eq!(xml.len(), xml.capacity(), "{xml}");
        }
    }

    #[test]
    fn write_xml_appends() {
        let e = ToolError::not_found("gone");
        let mut buf = String::from("prefix:");
        e.write_xml(&mut buf);
        assert_eq!(buf, format!("prefix:{}", e.to_xml()));
    }

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

    /// The envelope assembled the obvious way, section by section with `format!`, from SPEC
    /// section 1 and the reference escaper: what the renderer's merged literals must equal.
    fn reference_xml(e: &ToolError) -> String {
        use crate::xml::reference_escape;
        let (text, attr) = (
            |s: &str| reference_escape(s, Context::Text),
            |s: &str| reference_escape(s, Context::Attr),
        );
        let mut xml = format!(
            "<tool_error code=\"{}\" severity=\"{}\">\n<message>{}</message>\n",
            attr(e.code().as_str()),
            e.severity_level().as_str(),
            text(e.message())
        );
        if let Some(recovery) = e.recovery() {
            xml += &format!("<recovery>{}</recovery>\n", text(recovery));
        }
        if !e.available_actions().is_empty() {
            xml += "<available_actions>\n";
            for action in e.available_actions() {
                xml += &format!("  <action>{}</action>\n", text(action));
            }
            xml += "</available_actions>\n";
        }
        if !e.details().is_empty() {
            xml += "<details>\n";
            for (key, value) in e.details() {
                xml += &format!("  <detail key=\"{}\">{}</detail>\n", attr(key), text(value));
            }
            xml += "</details>\n";
        }
        if let Some(secs) = e.retry_after_secs() {
            xml += &format!("<retry_after>{secs} seconds</retry_after>\n");
        }
        xml + "</tool_error>"
    }

    #[test]
    fn severity_literals_match_the_wire_strings() {
        for severity in [Severity::Warning, Severity::Error, Severity::Critical] {
            let xml = ToolError::not_found("m").severity(severity).to_xml();
            let want = format!("severity=\"{}\">\n<message>m</message>", severity.as_str());
            assert!(xml.contains(&want), "{xml}");
        }
    }

    #[test]
    fn canonical_open_tags_match_the_wire_strings() {
        for code in ErrorCode::CANONICAL {
            let mut out = String::new();
            assert!(code.push_open_tag(|tag| out.push_str(tag)));
            assert_eq!(out, format!("<tool_error code=\"{}", code.as_str()));
        }
        let mut pushed = false;
        assert!(!ErrorCode::from("ALREADY_PAID").push_open_tag(|_| pushed = true));
        assert!(!pushed);
    }

    #[test]
    fn canonical_codes_need_no_escaping() {
        // `write_sections` copies canonical codes without measuring or escaping them.
        for code in ErrorCode::CANONICAL {
            let wire = code.as_str();
            assert!(
                wire.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'),
                "{wire}"
            );
        }
    }

    /// `to_xml` equals the reference, is sized exactly, and `write_xml` appends the same bytes.
    fn renders_like_the_reference(e: &ToolError) -> Result<(), TestCaseError> {
        let xml = e.to_xml();
        prop_assert_eq!(&xml, &reference_xml(e));
        prop_assert_eq!(xml.len(), xml.capacity());
        let mut appended = String::from("prefix");
        e.write_xml(&mut appended);
        prop_assert_eq!(&appended["prefix".len()..], xml.as_str());
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn to_xml_equals_the_reference_rendering(
            code in prop_oneof![
                prop::sample::select(ErrorCode::CANONICAL.to_vec()),
                "[A-Z_<>&\"'\u{0}\u{FFFF}\t]{0,12}".prop_map(ErrorCode::from),
            ],
            severity in prop::sample::select(vec![Severity::Warning, Severity::Error, Severity::Critical]),
            message in ".{0,40}|[a-z <>&\"'\n\u{1}\u{FFFE}\u{FFFF}\u{FFFD}]{0,40}",
            recovery in ".{0,40}|[a-z <>&\"'\r\u{1F}\u{FFFF}]{0,40}",
            actions in prop::collection::vec("[a-z_.<&]{0,24}", 0..4),
            details in prop::collection::vec(("[a-zA-Z<>&\"']{0,16}", "[a-z0-9_<>&\"'\u{0}]{0,20}"), 0..4),
            retry in prop_oneof![Just(0u64), any::<u64>()],
        ) {
            let e = ToolError::new(code, message)
                .severity(severity)
                .suggest(recovery)
                .actions(actions)
                .with_details(details)
                .retry_after(retry);
            renders_like_the_reference(&e)?;
        }

        /// The one-pass writer sizes the buffer for the strings as they are and grows it at the
        /// first one that needs escaping: a full envelope whose first string (the custom code),
        /// middle strings, last string (the last detail value) or several of them need
        /// escaping, at any position, must still equal the reference and be sized exactly.
        #[test]
        fn escaping_any_string_keeps_the_envelope_exact(
            dirty in prop::collection::vec(any::<bool>(), 9),
            special in prop::sample::select(vec!["&", "<", ">", "\"", "'", "\u{1}", "\u{FFFF}", "\n", "\t"]),
            at in 0usize..48,
            severity in prop::sample::select(vec![Severity::Warning, Severity::Error, Severity::Critical]),
            retry in prop_oneof![Just(0u64), 1u64..200, any::<u64>()],
        ) {
            let mut strings = [
                "ALREADY_PAID",
                "No invoice with that ID",
                "List invoices first, then retry with a real ID",
                "billing.list_invoices",
                "billing.get_invoice",
                "requestedId",
                "inv_2026_9999",
                "customer",
                "cus_42",
            ]
            .map(str::to_owned);
            for (string, dirty) in strings.iter_mut().zip(&dirty) {
                if *dirty {
                    string.insert_str(at.min(string.len()), special);
                }
            }
            let [code, message, recovery, action1, action2, key1, value1, key2, value2] = strings;
            let e = ToolError::new(code, message)
                .severity(severity)
                .suggest(recovery)
                .actions([action1, action2])
                .detail(key1, value1)
                .detail(key2, value2)
                .retry_after(retry);
            renders_like_the_reference(&e)?;
        }
    }
}
