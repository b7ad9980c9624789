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

use serde_json::{Map, Value};

use crate::xml::{self, Context};

pub use delta::{DeltaClass, ScopedDelta};
pub(crate) use path::{Part, Parts, ROOT};

/// [`RECOVERY`] as a literal, so the renderer can copy it with its tags in one piece.
macro_rules! recovery {
    () => {
        "Fix the fields above and call the tool again. Do not explain the error."
    };
}

/// The closing instruction of every validation envelope, verbatim. "Do not explain the error"
/// is there because a model's instinct is to apologise to the user instead of calling again.
pub const RECOVERY: &str = recovery!();

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
        self.awareness = if deltas.is_empty() {
            None
        } else {
            Some(deltas)
        };
        self
    }

    /// The contract deltas listed in the `<contract_awareness>` section (empty: no section).
    pub fn contract_awareness(&self) -> &[ScopedDelta] {
        self.awareness.as_deref().map_or(&[], Vec::as_slice)
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
    /// Attribute values escape `& < > " '`, field text escapes `&` and `<`. One allocation,
    /// sized exactly.
    pub fn to_xml(&self) -> String {
        let mut all_plain = true;
        let out = String::with_capacity(self.xml_len(xml::measure(&mut all_plain)));
        self.write_sections(out, all_plain)
    }

    /// Appends the envelope to `out`, for callers that reuse a buffer (grows it at most once).
    pub fn write_xml(&self, out: &mut String) {
        let mut all_plain = true;
        out.reserve(self.xml_len(xml::measure(&mut all_plain)));
        *out = self.write_sections(std::mem::take(out), all_plain);
    }

    /// Writes the envelope after `out`'s contents and returns the buffer; `out` has room for
    /// it (see [`xml::Writer::presized`]).
    ///
    /// Measured with the escaped lengths straight away (where `ToolError` first tries the
    /// strings' own lengths): the framework's own lines often need escaping (`Expected a
    /// number <= 1.0.`).
    fn write_sections(&self, out: String, all_plain: bool) -> String {
        let mut w = xml::Writer::presized(out, all_plain);
        w.literal("<validation_error action=\"");
        w.attr(&self.action);
        w.literal("\">\n");
        for problem in &self.problems {
            w.literal("<field name=\"");
            w.attr(&problem.path);
            w.literal("\">");
            w.text(&problem.line);
            w.literal("</field>\n");
        }
        if let Some(awareness) = &self.awareness {
            w.literal("<contract_awareness>\n");
            for delta in awareness.iter() {
                w.literal("  <delta severity=\"");
                // The class names are plain ASCII words: nothing to escape.
                w.literal(delta.class.as_str());
                w.literal("\" scope=\"");
                w.attr(&delta.scope);
                w.literal("\">");
                w.text(&delta.text);
                w.literal("</delta>\n");
            }
            w.literal("</contract_awareness>\n");
        }
        w.literal(concat!(
            "<recovery>",
            recovery!(),
            "</recovery>\n</validation_error>"
        ));
        w.finish()
    }

    /// The length in bytes of [`ValidationError::to_xml`]'s output, with `len` giving the
    /// escaped length of each string ([`xml::measure`]).
    #[inline(always)]
    fn xml_len(&self, mut len: impl FnMut(&str, Context) -> usize) -> usize {
        // Fixed parts, counted from the literals in `write_sections`.
        const OPEN: usize = "<validation_error action=\"\">\n".len();
        const FIELD: usize = "<field name=\"\"></field>\n".len();
        const CLOSE: usize = "<recovery></recovery>\n</validation_error>".len() + RECOVERY.len();

        let mut total = OPEN + CLOSE + len(&self.action, Context::Attr);
        for problem in &self.problems {
            total += FIELD + len(&problem.path, Context::Attr) + len(&problem.line, Context::Text);
        }
        if let Some(awareness) = &self.awareness {
            const SECTION: usize = "<contract_awareness>\n</contract_awareness>\n".len();
            const DELTA: usize = "  <delta severity=\"\" scope=\"\"></delta>\n".len();
            total += SECTION;
            for delta in awareness.iter() {
                total += DELTA
                    + delta.class.as_str().len()
                    + len(&delta.scope, Context::Attr)
                    + len(&delta.text, Context::Text);
            }
        }
        total
    }

    /// The typed flags, the same keys as `ToolError::flags`:
    /// `{"isError": true, "errorCategory": "validation", "isRetryable": false,
    /// "code": "VALIDATION_ERROR", "severity": "error"}`. Not retryable as-is: the same
    /// arguments fail the same way.
    pub fn flags(&self) -> Value {
        let mut flags = Map::with_capacity(5);
        flags.insert("isError".into(), Value::Bool(true));
        flags.insert("errorCategory".into(), Value::from("validation"));
        flags.insert("isRetryable".into(), Value::Bool(false));
        flags.insert("code".into(), Value::from("VALIDATION_ERROR"));
        flags.insert("severity".into(), Value::from("error"));
        Value::Object(flags)
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
