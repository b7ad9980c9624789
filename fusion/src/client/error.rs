//! Why a call did not give its output: the tool's error result read back ([`ToolFailure`]),
//! a protocol or transport failure, arguments that are not an object, or questions of
//! `input_required` no input handler answered ([`InputRequired`]).

use std::fmt;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, InputRequests, InputRequiredResult,
};
use rmcp::service::ServiceError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::envelope::error::ToolError;
use crate::envelope::validation_error::{FieldProblem, ValidationError};

use super::envelope::Envelope;
use super::parse::ParseError;
use super::retry::Decision;
use crate::envelope::flags::Flags;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The tool answered with an error result (`isError: true`): the parsed envelope, the
    /// flags, the raw result and the policy's last decision.
    #[error("{0}")]
    Tool(Box<ToolFailure>),
    /// A JSON-RPC error or a transport failure: no tool result to read (an unknown tool is
    /// `-32602` by the MCP specification).
    #[error("MCP request failed: {0}")]
    Protocol(#[source] ServiceError),
    /// The arguments given to the client are not a JSON object (or `null`); nothing was sent.
    #[error("tool arguments must be a JSON object, not {0}")]
    Arguments(&'static str),
    /// The server needs answers before the call can complete (`input_required`, MCP
    /// 2026-07-28) and no input handler gave them: the questions and the `requestState`, to
    /// continue with [`Client::resume`](super::Client::resume).
    #[error("{0}")]
    InputRequired(Box<InputRequired>),
}

impl CallError {
    /// The tool failure, if the tool answered with an error result.
    pub fn tool_failure(&self) -> Option<&ToolFailure> {
        match self {
            CallError::Tool(failure) => Some(failure),
            _ => None,
        }
    }

    /// The flags, if the tool answered with an error result.
    pub fn flags(&self) -> Option<&Flags> {
        self.tool_failure().map(ToolFailure::flags)
    }
}

/// An error result, typed: the envelope read back, the flags, the raw result, and what the
/// retry policy decided last.
#[derive(Clone, Debug)]
pub struct ToolFailure {
    pub(super) envelope: Option<Envelope>,
    pub(super) parse_error: Option<ParseError>,
    pub(super) flags: Flags,
    pub(super) result: CallToolResult,
    pub(super) attempts: u32,
    pub(super) task_id: Option<String>,
    pub(super) decision: Decision,
}

impl ToolFailure {
    /// The envelope of the first text block that holds one (a prose block may come before
    /// it). A `<tool_error>`'s category, retryability and explanation are set from the flags.
    pub fn envelope(&self) -> Option<&Envelope> {
        self.envelope.as_ref()
    }

    /// The `<tool_error>`, if that is what the server sent.
    pub fn tool_error(&self) -> Option<&ToolError> {
        self.envelope.as_ref().and_then(Envelope::tool_error)
    }

    /// The `<validation_error>`, if that is what the server sent.
    pub fn validation(&self) -> Option<&ValidationError> {
        self.envelope.as_ref().and_then(Envelope::validation)
    }

    /// Why the first text block could not be read as an envelope, when no text block holds
    /// one (a server that answers errors in prose); the flags are then `_meta["fusion/error"]`'s, or
    /// [`Flags::uncontracted`].
    pub fn parse_error(&self) -> Option<&ParseError> {
        self.parse_error.as_ref()
    }

    /// The flags: `_meta["fusion/error"]` when the server sent them, else derived from the
    /// envelope's code and severity. When `_meta` states no readable `retryAfterSeconds`, the
    /// envelope's `<retry_after>` is used.
    pub fn flags(&self) -> &Flags {
        &self.flags
    }

    /// The raw result as received (the last attempt's).
    pub fn result(&self) -> &CallToolResult {
        &self.result
    }

    /// How many attempts were made.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The id of the task the last attempt ran as, when the server made it one.
    pub fn task_id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }

    /// The retry policy's last decision: [`Decision::Escalate`] or [`Decision::Abort`] with the
    /// reason.
    pub fn decision(&self) -> &Decision {
        &self.decision
    }

    /// Whether the failure needs a person or an auth flow (category auth).
    pub fn is_escalation(&self) -> bool {
        self.decision == Decision::Escalate
    }
}

impl fmt::Display for ToolFailure {
    /// `CODE (category): message`, or the first text block when no envelope was read.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flags = &self.flags;
        write!(f, "{} ({}): ", flags.code, flags.category)?;
        match &self.envelope {
            Some(Envelope::ToolError(e)) => f.write_str(e.message()),
            Some(Envelope::Validation(v)) => {
                let fields: Vec<&str> = v.problems().iter().map(FieldProblem::path).collect();
                write!(
                    f,
                    "invalid arguments for {}: {}",
                    v.action(),
                    fields.join(", ")
                )
            }
            None => f.write_str(texts(&self.result).next().unwrap_or("(no text)")),
        }
    }
}

/// A call the server cannot complete without answers (`input_required`): its questions, its
/// `requestState`, and the call they belong to. Continue it with
/// [`Client::resume`](super::Client::resume).
///
/// Serializes (serde) as `{"call": <the tools/call params>, "inputRequired": <the result>}`,
/// to keep a question open across a restart while the user answers. The state is good for as
/// long as the server says (fusion: 10 minutes by default, one use).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(from = "Stored")]
pub struct InputRequired {
    /// The `tools/call` as last sent (tool, arguments; the state and answers of that round).
    #[serde(rename = "call")]
    pub(super) params: CallToolRequestParams,
    #[serde(skip)]
    pub(super) requests: InputRequests,
    #[serde(rename = "inputRequired")]
    pub(super) result: InputRequiredResult,
}

/// What [`InputRequired`] reads back from: the questions are the result's.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    call: CallToolRequestParams,
    input_required: InputRequiredResult,
}

impl From<Stored> for InputRequired {
    fn from(stored: Stored) -> InputRequired {
        InputRequired::new(stored.call, stored.input_required)
    }
}

impl InputRequired {
    pub(super) fn new(params: CallToolRequestParams, result: InputRequiredResult) -> InputRequired {
        InputRequired {
            params,
            requests: result.input_requests.clone().unwrap_or_default(),
            result,
        }
    }

    /// The questions, keyed by the server's ids: `elicitation/create` (a form to show the
    /// user), `sampling/createMessage` or `roots/list` requests. Answer each under its key with
    /// the result of that request (an `ElicitResult`, …) as JSON.
    pub fn requests(&self) -> &InputRequests {
        &self.requests
    }

    /// The opaque `requestState` to echo back, unchanged, with the answers.
    pub fn request_state(&self) -> Option<&str> {
        self.result.request_state.as_deref()
    }

    /// The MCP tool called.
    pub fn tool(&self) -> &str {
        &self.params.name
    }

    /// The arguments of the call (with the discriminator, for a grouped tool).
    pub fn arguments(&self) -> Option<&Map<String, Value>> {
        self.params.arguments.as_ref()
    }

    /// The raw `input_required` result.
    pub fn result(&self) -> &InputRequiredResult {
        &self.result
    }
}

impl fmt::Display for InputRequired {
    /// ``tool `billing` needs input: q0``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = self.requests.keys().map(String::as_str).collect();
        write!(f, "tool `{}` needs input: {}", self.tool(), keys.join(", "))
    }
}

/// The text blocks of `result`, in order.
pub(super) fn texts(result: &CallToolResult) -> impl Iterator<Item = &str> {
    result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .map(|text| text.text.as_str())
}
