//! [`Envelope`]: an envelope read back, one of the two types that render them, and the
//! [`Flags`] of a result or an envelope.

use std::fmt;

use rmcp::model::CallToolResult;

use crate::envelope::code::{ErrorCode, Severity};
use crate::envelope::error::ToolError;
use crate::envelope::flags::Flags;
use crate::envelope::validation_error::ValidationError;
use crate::model::response::FLAGS_META_KEY;

/// An envelope read back by [`parse_envelope`](super::parse_envelope): a `<tool_error>` or a
/// `<validation_error>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Envelope {
    /// A `<tool_error>`: code, severity, message, recovery, available actions, details and
    /// retry delay, as a [`ToolError`] that re-renders to the same bytes.
    ToolError(ToolError),
    /// A `<validation_error>`: the action, one line per field and any contract deltas, as a
    /// [`ValidationError`] that re-renders to the same bytes.
    Validation(ValidationError),
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

    /// The flags derived from the envelope alone: code and severity as read,
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

    /// The validation error, if this is a `<validation_error>`.
    pub fn validation(&self) -> Option<&ValidationError> {
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

impl Flags {
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
}
