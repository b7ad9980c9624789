//! The parsed envelopes: [`Envelope`], and the client-side view of a `<validation_error>`.

use std::fmt;

use crate::code::{ErrorCode, Severity};
use crate::error::ToolError;
use crate::xml::{Context, push_escaped};

use super::flags::Flags;

/// An envelope read back by [`parse_envelope`](super::parse_envelope): a `<tool_error>` (SPEC
/// section 1) or a `<validation_error>` (SPEC section 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Envelope {
    /// A `<tool_error>`: code, severity, message, recovery, available actions, details and
    /// retry delay, as a [`ToolError`] that re-renders to the same bytes.
    ToolError(ToolError),
    /// A `<validation_error>`: the action, one line per field, any contract deltas and the
    /// recovery line.
    Validation(ValidationEnvelope),
}

impl Envelope {
    /// The code: the tool error's, or `VALIDATION_ERROR`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Envelope::ToolError(e) => e.code().clone(),
            Envelope::Validation(_) => ErrorCode::ValidationError,
        }
    }

    /// The severity: the tool error's, or `error` for a validation envelope.
    pub fn severity(&self) -> Severity {
        match self {
            Envelope::ToolError(e) => e.severity_level(),
            Envelope::Validation(_) => Severity::Error,
        }
    }

    /// The flags derived from the envelope alone (SPEC section 1): code and severity as read,
    /// category and retryability by the code's defaults. A result's `_meta["fusion/error"]`
    /// states them exactly and is preferred when present ([`Flags::of_result`]).
    pub fn flags(&self) -> Flags {
        match self {
            Envelope::ToolError(e) => Flags::from(e),
            Envelope::Validation(_) => Flags::validation(),
        }
    }

    /// The tool error, if this is a `<tool_error>`.
    pub fn tool_error(&self) -> Option<&ToolError> {
        match self {
            Envelope::ToolError(e) => Some(e),
            Envelope::Validation(_) => None,
        }
    }

    /// The validation envelope, if this is a `<validation_error>`.
    pub fn validation(&self) -> Option<&ValidationEnvelope> {
        match self {
            Envelope::ToolError(_) => None,
            Envelope::Validation(v) => Some(v),
        }
    }

    /// The envelope rendered again, byte-exact for envelopes fusion wrote.
    pub fn to_xml(&self) -> String {
        match self {
            Envelope::ToolError(e) => e.to_xml(),
            Envelope::Validation(v) => v.to_xml(),
        }
    }
}

impl fmt::Display for Envelope {
    /// `CODE: message` for a tool error; `VALIDATION_ERROR: action: field: line; …` for a
    /// validation envelope. For logs: a model reads [`Envelope::to_xml`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Envelope::ToolError(e) => fmt::Display::fmt(e, f),
            Envelope::Validation(v) => fmt::Display::fmt(v, f),
        }
    }
}

/// A `<validation_error>` as a client reads it (SPEC section 2):
///
/// ```text
/// <validation_error action="billing.charge">
/// <field name="currency">Missing required field. You sent: (missing). Expected one of: EUR, USD.</field>
/// <contract_awareness>
///   <delta severity="BREAKING" scope="billing.charge">Field 'currency' became required (before: optional; now: required).</delta>
/// </contract_awareness>
/// <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
/// </validation_error>
/// ```
///
/// Its flags are always code `VALIDATION_ERROR`, category validation, not retryable as-is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ValidationEnvelope {
    /// The action: `tool.action`, or `tool` for a single-function tool.
    pub action: String,
    /// One entry per `<field>`, in the order sent (fusion sorts them by path).
    pub fields: Vec<FieldLine>,
    /// The `<delta>` entries of the `<contract_awareness>` section, in the order sent (highest
    /// severity first); empty when the section is absent.
    pub contract_awareness: Vec<ContractDelta>,
    /// The `<recovery>` text, when present.
    pub recovery: Option<String>,
}

impl ValidationEnvelope {
    /// An envelope for `action` with no field yet.
    pub fn new(action: impl Into<String>) -> ValidationEnvelope {
        ValidationEnvelope {
            action: action.into(),
            ..ValidationEnvelope::default()
        }
    }

    /// The line of the first field at `path`, if any.
    pub fn field(&self, path: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| f.name == path)
            .map(|f| f.text.as_str())
    }

    /// The envelope rendered with fusion's layout and escaping (SPEC section 2): the opening
    /// tag, one `<field>` line each, the `<contract_awareness>` section when there are deltas
    /// (one indented `<delta>` line each), the recovery line when present, the closing tag.
    /// Byte-exact for envelopes fusion wrote.
    pub fn to_xml(&self) -> String {
        let mut out = String::with_capacity(128);
        out.push_str("<validation_error action=\"");
        push_escaped(&mut out, &self.action, Context::Attr);
        out.push_str("\">\n");
        for field in &self.fields {
            out.push_str("<field name=\"");
            push_escaped(&mut out, &field.name, Context::Attr);
            out.push_str("\">");
            push_escaped(&mut out, &field.text, Context::Text);
            out.push_str("</field>\n");
        }
        if !self.contract_awareness.is_empty() {
            out.push_str("<contract_awareness>\n");
            for delta in &self.contract_awareness {
                out.push_str("  <delta severity=\"");
                push_escaped(&mut out, delta.severity.as_str(), Context::Attr);
                out.push_str("\" scope=\"");
                push_escaped(&mut out, &delta.scope, Context::Attr);
                out.push_str("\">");
                push_escaped(&mut out, &delta.text, Context::Text);
                out.push_str("</delta>\n");
            }
            out.push_str("</contract_awareness>\n");
        }
        if let Some(recovery) = &self.recovery {
            out.push_str("<recovery>");
            push_escaped(&mut out, recovery, Context::Text);
            out.push_str("</recovery>\n");
        }
        out.push_str("</validation_error>");
        out
    }
}

impl fmt::Display for ValidationEnvelope {
    /// `VALIDATION_ERROR: action: path: line; path: line`, like the server's
    /// `ValidationError`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VALIDATION_ERROR: {}", self.action)?;
        for (n, field) in self.fields.iter().enumerate() {
            f.write_str(if n == 0 { ": " } else { "; " })?;
            write!(f, "{}: {}", field.name, field.text)?;
        }
        Ok(())
    }
}

/// One `<field name="PATH">LINE</field>` of a validation envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldLine {
    /// The field path: `name`, `address.zip`, `items[0].sku`, or `(root)`.
    pub name: String,
    /// The line: `{problem}. You sent: {value}. Expected {expectation}.`
    pub text: String,
}

impl FieldLine {
    /// A field line.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> FieldLine {
        FieldLine {
            name: name.into(),
            text: text.into(),
        }
    }
}

/// One `<delta severity="…" scope="…">text</delta>` of a `<contract_awareness>` section: a
/// change of the server's contract since the lockfile it was started with (SPEC sections 2
/// and 6).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContractDelta {
    /// How the change affects a client that learned the old contract.
    pub severity: DeltaSeverity,
    /// What changed: `tool.action` for an action, `tool` for the tool as a whole.
    pub scope: String,
    /// The change in words: `Field 'currency' became required (before: optional; now: required).`
    pub text: String,
}

impl ContractDelta {
    /// A delta.
    pub fn new(
        severity: DeltaSeverity,
        scope: impl Into<String>,
        text: impl Into<String>,
    ) -> ContractDelta {
        ContractDelta {
            severity,
            scope: scope.into(),
            text: text.into(),
        }
    }
}

/// The severity of a contract delta (SPEC section 6). Closed-then-open like [`ErrorCode`]:
/// the four classes of a lockfile diff, plus whatever else a server sends.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeltaSeverity {
    /// `BREAKING`: calls that worked before now fail (removed action, new required field).
    Breaking,
    /// `RISKY`: calls may behave differently.
    Risky,
    /// `SAFE`: additions (new optional field, new action).
    Safe,
    /// `COSMETIC`: descriptions only.
    Cosmetic,
    /// Any other value, kept as sent.
    Other(String),
}

impl DeltaSeverity {
    /// The wire string: `BREAKING`, `RISKY`, `SAFE`, `COSMETIC`, or the other value.
    pub fn as_str(&self) -> &str {
        match self {
            DeltaSeverity::Breaking => "BREAKING",
            DeltaSeverity::Risky => "RISKY",
            DeltaSeverity::Safe => "SAFE",
            DeltaSeverity::Cosmetic => "COSMETIC",
            DeltaSeverity::Other(s) => s,
        }
    }
}

impl From<&str> for DeltaSeverity {
    /// Exact, uppercase wire strings map to the named variants; anything else is `Other`.
    fn from(s: &str) -> DeltaSeverity {
        match s {
            "BREAKING" => DeltaSeverity::Breaking,
            "RISKY" => DeltaSeverity::Risky,
            "SAFE" => DeltaSeverity::Safe,
            "COSMETIC" => DeltaSeverity::Cosmetic,
            other => DeltaSeverity::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for DeltaSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
