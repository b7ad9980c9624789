//! The `<validation_error>` envelope: the action, one line per field problem sorted by path,
//! the contract deltas that tell a model what changed since the contract it learned, and the
//! fixed recovery line.
//!
//! The envelope is rendered here and read back by [`crate::client::parse_envelope`]: both work
//! on [`ValidationError`]. Building one from the arguments a model sent (JSON Schema, serde,
//! `validator` rules) is the job of [`crate::validation`].

mod delta;
mod path;

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::envelope::flags::Flags;
use crate::envelope::xml::{push_attr, push_text};

pub use delta::{DeltaClass, ScopedDelta};
pub(crate) use path::{Part, Parts, ROOT, compare as compare_paths};

/// The closing instruction of every validation envelope, verbatim. "Do not explain the error"
/// is there because a model's instinct is to apologise to the user instead of calling again.
pub const RECOVERY: &str =
    "Fix the fields above and call the tool again. Do not explain the error.";

/// One problem: the field's path and the line the model reads.
///
/// The path is `name`, `address.zip`, `items[0].sku`, or `(root)` for the arguments object as
/// a whole. The line reads `{problem}. You sent: {value}. Expected {expectation}.`
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldProblem {
    path: String,
    line: String,
}

impl FieldProblem {
    /// A problem at `path` (see the type docs for the path syntax) with its full line.
    pub fn new(path: impl Into<String>, line: impl Into<String>) -> FieldProblem {
        FieldProblem {
            path: path.into(),
            line: line.into(),
        }
    }

    /// The field path: `items[0].sku`, or `(root)`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The full line: `Wrong type. You sent: 'abc'. Expected a number.`
    pub fn line(&self) -> &str {
        &self.line
    }
}

/// A failed validation of a tool call's arguments: the action and every problem found, kept
/// sorted by field path.
///
/// Paths sort segment by segment with array indices compared as numbers (`items[2]` before
/// `items[10]`), `(root)` first; problems with equal paths keep insertion order. (An envelope
/// read back by [`parse_envelope`](crate::client::parse_envelope) keeps its fields in the order
/// they were sent, so that it renders the same bytes again.) Rendering with
/// [`ValidationError::to_xml`] gives the `<validation_error>` envelope, byte-exact:
///
/// ```
/// use fusion::ValidationError;
///
/// let err = ValidationError::new("billing.get_invoice").with_problem(
///     "id",
///     "Invalid email format. You sent: 'not-an-email'. Expected a valid email address.",
/// );
/// assert_eq!(
///     err.to_xml(),
///     "<validation_error action=\"billing.get_invoice\">\n\
///      <field name=\"id\">Invalid email format. You sent: 'not-an-email'. Expected a valid email address.</field>\n\
///      <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
///      </validation_error>"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    action: String,
    problems: Vec<FieldProblem>,
    /// Shared with the server's per-action lists; an `Arc` of a `Vec` (a thin pointer) keeps
    /// `ToolResponse` small enough to return by value.
    awareness: Option<Arc<Vec<ScopedDelta>>>,
}

impl ValidationError {
    /// An error with no problems yet for `action`: `tool.action`, or just `tool` for a
    /// single-function tool.
    pub fn new(action: impl Into<String>) -> ValidationError {
        ValidationError {
            action: action.into(),
            problems: Vec::new(),
            awareness: None,
        }
    }

    /// Adds a problem at `path` (`items[0].sku`, `(root)`) with its full line, at its sorted
    /// place (after problems with the same path).
    pub fn push(&mut self, path: impl Into<String>, line: impl Into<String>) {
        self.push_problem(FieldProblem::new(path, line));
    }

    /// [`ValidationError::push`] for an already built problem.
    pub fn push_problem(&mut self, problem: FieldProblem) {
        let at = self
            .problems
            .partition_point(|p| path::compare(&p.path, &problem.path).is_le());
        self.problems.insert(at, problem);
    }

    /// Consuming [`ValidationError::push`], for chains.
    pub fn with_problem(
        mut self,
        path: impl Into<String>,
        line: impl Into<String>,
    ) -> ValidationError {
        self.push(path, line);
        self
    }

    /// Moves every problem of `other` into this error (its action is ignored).
    pub fn merge(&mut self, other: ValidationError) {
        self.push_all(other.problems);
    }

    /// Appends `problems` in the order given, not sorted: for an envelope read back, whose
    /// order is the one it was written in. (Sorting again could reorder it: a forbidden
    /// character in a path sorts where it was, but is written as U+FFFD.)
    pub(crate) fn extend_as_sent(&mut self, problems: Vec<FieldProblem>) {
        self.problems.extend(problems);
    }

    /// Adds every problem of `problems` at its sorted place, as [`ValidationError::push`] one
    /// by one would (equal paths keep insertion order, after the problems already here), in
    /// O(n log n): one stable sort and one merge instead of an insertion each.
    pub(crate) fn push_all(&mut self, mut problems: Vec<FieldProblem>) {
        problems.sort_by(|a, b| path::compare(&a.path, &b.path));
        if self.problems.is_empty() {
            self.problems = problems;
            return;
        }
        let existing = std::mem::take(&mut self.problems);
        let mut merged = Vec::with_capacity(existing.len() + problems.len());
        let mut new = problems.into_iter().peekable();
        for problem in existing {
            while let Some(next) = new.next_if(|n| path::compare(&problem.path, &n.path).is_gt()) {
                merged.push(next);
            }
            merged.push(problem);
        }
        merged.extend(new);
        self.problems = merged;
    }

    /// Sets the contract deltas the envelope lists in its `<contract_awareness>` section, in the
    /// order given; an empty list removes the section.
    /// A server started with a [`ContractBaseline`](crate::contract::ContractBaseline) sets
    /// them.
    ///
    /// ```
    /// use fusion::ValidationError;
    /// use fusion::contract::{DeltaClass, ScopedDelta};
    ///
    /// let err = ValidationError::new("billing.charge")
    ///     .with_problem("currency", "Missing required field. You sent: (missing). Expected one of: 'EUR', 'USD'.")
    ///     .with_contract_awareness(vec![ScopedDelta {
    ///         class: DeltaClass::Breaking,
    ///         scope: "billing.charge".into(),
    ///         text: "Field 'currency' became required (before: optional; now: required).".into(),
    ///     }]);
    /// assert_eq!(err.to_xml(), "\
    /// <validation_error action=\"billing.charge\">
    /// <field name=\"currency\">Missing required field. You sent: (missing). Expected one of: 'EUR', 'USD'.</field>
    /// <contract_awareness>
    ///   <delta severity=\"BREAKING\" scope=\"billing.charge\">Field 'currency' became required (before: optional; now: required).</delta>
    /// </contract_awareness>
    /// <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
    /// </validation_error>");
    /// ```
    pub fn with_contract_awareness(self, deltas: Vec<ScopedDelta>) -> ValidationError {
        self.with_shared_awareness(Arc::new(deltas))
    }

    /// [`ValidationError::with_contract_awareness`] with a list shared by many errors.
    pub(crate) fn with_shared_awareness(
        mut self,
        deltas: Arc<Vec<ScopedDelta>>,
    ) -> ValidationError {
        self.awareness = (!deltas.is_empty()).then_some(deltas);
        self
    }

    /// The contract deltas listed in the `<contract_awareness>` section (empty: no section).
    pub fn contract_awareness(&self) -> &[ScopedDelta] {
        self.awareness.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Replaces the action the envelope names (a flat tool name in flat exposition).
    pub(crate) fn set_action(&mut self, action: String) {
        self.action = action;
    }

    /// The action: `tool.action` or `tool`.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// The problems, sorted by path.
    pub fn problems(&self) -> &[FieldProblem] {
        &self.problems
    }

    /// The line of the first problem at `path` (the text of `<field name="PATH">`), if any.
    pub fn field(&self, path: &str) -> Option<&str> {
        self.problems
            .iter()
            .find(|p| p.path == path)
            .map(|p| p.line.as_str())
    }

    /// Whether no problem was found (the arguments are valid).
    pub fn is_empty(&self) -> bool {
        self.problems.is_empty()
    }

    /// How many problems there are.
    pub fn len(&self) -> usize {
        self.problems.len()
    }

    /// The `<validation_error>` envelope, byte-exact: the opening tag with the
    /// action, one `<field name="PATH">LINE</field>` per problem, the `<contract_awareness>`
    /// section when deltas are set (one `  <delta severity="…" scope="…">TEXT</delta>` line
    /// each), the recovery line, the closing tag; joined with `\n`, no trailing newline.
    /// Attribute values escape `& < > " '`; text escapes `&`, `<` and the `>` of `]]>`.
    pub fn to_xml(&self) -> String {
        let mut out = String::with_capacity(256);
        self.write_xml(&mut out);
        out
    }

    /// Appends the envelope to `out`, for callers that reuse a buffer.
    pub fn write_xml(&self, out: &mut String) {
        out.push_str("<validation_error action=\"");
        push_attr(out, &self.action);
        out.push_str("\">\n");
        for problem in &self.problems {
            out.push_str("<field name=\"");
            push_attr(out, &problem.path);
            out.push_str("\">");
            push_text(out, &problem.line);
            out.push_str("</field>\n");
        }
        if let Some(awareness) = &self.awareness {
            out.push_str("<contract_awareness>\n");
            for delta in awareness.iter() {
                out.push_str("  <delta severity=\"");
                out.push_str(delta.class.as_str());
                out.push_str("\" scope=\"");
                push_attr(out, &delta.scope);
                out.push_str("\">");
                push_text(out, &delta.text);
                out.push_str("</delta>\n");
            }
            out.push_str("</contract_awareness>\n");
        }
        out.push_str("<recovery>");
        out.push_str(RECOVERY);
        out.push_str("</recovery>\n</validation_error>");
    }

    /// The typed flags, the same keys as `ToolError::flags`:
    /// `{"isError": true, "errorCategory": "validation", "isRetryable": false,
    /// "code": "VALIDATION_ERROR", "severity": "error"}`. Not retryable as-is: the same
    /// arguments fail the same way.
    pub fn flags(&self) -> Value {
        Flags::validation().to_value()
    }
}

/// `VALIDATION_ERROR: action: path: line; path: line`, for logs. The model sees
/// [`ValidationError::to_xml`]. Secrets are already redacted in the lines.
impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VALIDATION_ERROR: {}", self.action)?;
        for (n, problem) in self.problems.iter().enumerate() {
            f.write_str(if n == 0 { ": " } else { "; " })?;
            write!(f, "{}: {}", problem.path, problem.line)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationError {}
