//! What a tool tells the world about itself: its definition (name, description,
//! discriminator), its actions' definitions (input and output schemas, annotations) and the
//! error contract each action declares.

use serde_json::{Map, Value};

use crate::envelope::code::{ErrorCategory, ErrorCode, Severity};

use super::exposition::Exposition;
use super::result_fit::ResultFit;

/// One error an action can produce: its code and the flags it carries. Fed by
/// `#[derive(ToolErrors)]`; part of the tool's contract (`_meta` and the lockfile).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorContract {
    /// The code.
    pub code: ErrorCode,
    /// The severity the code is produced with.
    pub severity: Severity,
    /// The category client code sees.
    pub category: ErrorCategory,
    /// Whether an identical retry can succeed.
    pub retryable: bool,
}

impl ErrorContract {
    /// A contract entry with the default flags filled in: the category falls back
    /// to the code's default (then `unknown`), retryability to the category's default.
    pub fn new(
        code: ErrorCode,
        severity: Severity,
        category: Option<ErrorCategory>,
        retryable: Option<bool>,
    ) -> ErrorContract {
        let category = category
            .or_else(|| code.default_category())
            .unwrap_or(ErrorCategory::Unknown);
        ErrorContract {
            retryable: retryable.unwrap_or_else(|| category.is_retryable_by_default()),
            code,
            severity,
            category,
        }
    }
}

/// An error type an action may return (`Result<T, E>` with `E: ToolErrors`): it converts into
/// a [`ToolError`](crate::ToolError) and declares the codes it can produce.
///
/// `#[derive(ToolErrors)]` implements it with the contract of the enum's variants.
/// `ToolError`, `anyhow::Error`, `std::io::Error` and boxed `std::error::Error`s implement it
/// with no declared contract. For an error type of your own that converts into `ToolError`
/// by hand, an empty impl is enough: `impl fusion::ToolErrors for MyError {}`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an action's error",
    label = "not `fusion::ToolErrors`",
    note = "derive `fusion::ToolErrors` on your error type, return `fusion::ToolError` or `anyhow::Error`, or convert the error with `.map_err(|e| fusion::ToolError::from_internal(&e))`"
)]
pub trait ToolErrors: Into<crate::ToolError> {
    /// Every code the type can produce, with its severity, category and retryability, in
    /// declaration order: feeds the tool definition and the lockfile. By default, the
    /// contracts of [`ToolErrors::variant_contracts`].
    fn error_contracts() -> Vec<ErrorContract> {
        Self::variant_contracts()
            .into_iter()
            .map(|(_, contract)| contract)
            .collect()
    }

    /// Each variant's name (`"NotFound"`; a struct's own name) and contract, in declaration
    /// order. An action declaring the variants it returns
    /// (`#[action(errors(BillingError::NotFound))]`) advertises the contracts of those
    /// variants only. None by default; `#[derive(ToolErrors)]` lists every variant.
    fn variant_contracts() -> Vec<(&'static str, ErrorContract)> {
        Vec::new()
    }

    /// The name of the variant this value is (as in [`ToolErrors::variant_contracts`]), so
    /// a variant returned outside an action's declaration can be reported; `None` by
    /// default.
    fn variant(&self) -> Option<&'static str> {
        None
    }
}

/// MCP tool annotations (MCP specification 2025-06-18, "Tool annotations"): hints about an
/// action's behaviour. `None` leaves the hint to the MCP default (not read-only, destructive,
/// not idempotent, open world); a server advertises every hint explicitly, the defaults filled
/// in ([`Annotations::stated`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Annotations {
    /// The action does not modify its environment (`readOnlyHint`).
    pub read_only: Option<bool>,
    /// The action may perform destructive updates (`destructiveHint`).
    pub destructive: Option<bool>,
    /// Calling it repeatedly with the same arguments has no further effect (`idempotentHint`).
    pub idempotent: Option<bool>,
    /// The action talks to an open world of external entities (`openWorldHint`).
    pub open_world: Option<bool>,
}

impl Annotations {
    /// Every hint set: an unset one takes its MCP default (read-only `false`, destructive
    /// `true`, idempotent `false`, open world `true`), except that a read-only action is never
    /// destructive (MCP: `destructiveHint` is meaningful only when `readOnlyHint` is false; a
    /// client that reads it alone must not see a read-only action as destructive).
    ///
    /// ```
    /// use fusion::Annotations;
    ///
    /// let read_only = Annotations { read_only: Some(true), ..Annotations::default() };
    /// assert_eq!(
    ///     read_only.stated(),
    ///     Annotations {
    ///         read_only: Some(true),
    ///         destructive: Some(false),
    ///         idempotent: Some(false),
    ///         open_world: Some(true),
    ///     }
    /// );
    /// ```
    pub fn stated(self) -> Annotations {
        let read_only = self.read_only.unwrap_or(false);
        Annotations {
            read_only: Some(read_only),
            destructive: Some(!read_only && self.destructive.unwrap_or(true)),
            idempotent: Some(self.idempotent.unwrap_or(false)),
            open_world: Some(self.open_world.unwrap_or(true)),
        }
    }
}

/// One action of a tool.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(test, derive(Default))]
pub struct ActionDefinition {
    /// The action's name, the discriminator value (`list_invoices`). For a single-function
    /// tool, the tool's own name.
    pub name: String,
    /// What the action does, for the model (from the doc comment or `description = "…"`).
    pub description: String,
    /// A short human-readable name for user interfaces (`Get an invoice`): the MCP tool
    /// `title` of the action's tool in flat exposition (MCP specification 2025-06-18, "Tools").
    /// From `#[action(title = "…")]`, else the doc comment's summary; `None` without either.
    pub title: Option<String>,
    /// The JSON Schema of the action's own arguments (an object schema, discriminator
    /// excluded; `$defs` kept).
    pub input_schema: Map<String, Value>,
    /// The behaviour hints.
    pub annotations: Annotations,
    /// The errors the action's error type can produce, in declaration order.
    pub errors: Vec<ErrorContract>,
    /// Argument paths whose values must never be echoed (`(redacted)` in validation errors).
    pub secret_fields: Vec<String>,
    /// The JSON Schema of the action's success value, as it serializes (schemars' serialize
    /// contract, `$defs` kept), declared with `#[action(output_schema)]`; `None` otherwise.
    ///
    /// A server advertises it as the MCP tool's `outputSchema` (MCP specification 2025-06-18,
    /// "Tools", "Output Schema") in flat exposition, and in grouped exposition for a tool with
    /// exactly one action. MCP requires an object schema: a server omits a schema whose
    /// top-level `type` is not `"object"` and logs a warning.
    pub output_schema: Option<Map<String, Value>>,
    /// The OAuth scopes a caller's [`Principal`](crate::auth::Principal) must hold to call the
    /// action (`invoices:write`), in declaration order; empty when the action needs none.
    /// Declared with `#[action(scopes("invoices:write"))]` (or on the whole tool), recorded
    /// from the tool's guards by [`ToolGuards::declare_errors`](crate::guard::ToolGuards::declare_errors);
    /// advertised in the tool's `_meta["fusion/scopes"]` and recorded in the lockfile. The
    /// guards check them (`FORBIDDEN`, `UNAUTHORIZED`).
    pub scopes: Vec<String>,
    /// Whether the action may run as a task (MCP Tasks extension, `io.modelcontextprotocol/tasks`):
    /// a call from a client that declares the extension is answered at once with a task the
    /// client polls. Declared with `#[action(task)]`; advertised in the tool's
    /// `_meta["fusion/tasks"]` and recorded in the lockfile.
    pub task: bool,
    /// Whether the action runs only as a task (MCP tool `execution.taskSupport: "required"`):
    /// a call from a client that does not declare the Tasks extension is refused with JSON-RPC
    /// `-32021` (Missing Required Client Capability, SEP-2575; HTTP 400), its
    /// `data.requiredCapabilities` naming the extension. Implies [`ActionDefinition::task`].
    /// Declared with `#[action(task = required)]`; advertised in the tool's
    /// `_meta["fusion/tasks_required"]` and recorded in the lockfile.
    pub task_required: bool,
    /// Whether the action's task starts when the action calls
    /// [`RequestContext::start_task`](crate::RequestContext::start_task), not before the
    /// handler runs: until then the call runs as a direct call, its questions asked as a direct
    /// call's (on the stateless revision, `input_required` rounds, SEP-2322), and an action
    /// that answers without starting its task is answered directly. So an action gathers its
    /// input first and then goes on as a task (SEP-2663, input before task creation).
    /// Declared with `#[action(task(deferred))]` or `#[action(task(required, deferred))]`.
    pub task_deferred: bool,
    /// Whether the action takes its arguments strictly as sent: a string where its schema
    /// wants an array, an object, a number, an integer or a boolean is refused as one, never
    /// read as the JSON it holds (which a server does by default; see
    /// [`Server::decode_stringified_arguments`](crate::server::Server::decode_stringified_arguments)).
    /// Declared with `#[action(strict_json)]`.
    pub strict_json: bool,
    /// How large the action's result may be and how its list is paged (see [`ResultFit`]);
    /// the default declares nothing: the server's limit, if any, applies.
    pub result: ResultFit,
}

impl ActionDefinition {
    /// Whether the action may run as a task: declared so, or run only as one
    /// ([`ActionDefinition::task_required`] implies [`ActionDefinition::task`], even in a
    /// definition written by hand that sets only the former).
    pub(crate) fn may_run_as_task(&self) -> bool {
        self.task || self.task_required
    }
}

#[cfg(test)]
impl ActionDefinition {
    /// An action named `name` that declares nothing else, for tests.
    pub(crate) fn named(name: &str) -> ActionDefinition {
        ActionDefinition {
            name: name.to_owned(),
            ..ActionDefinition::default()
        }
    }
}

/// A tool: a name, a description and its actions.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    /// The MCP tool name (`billing`).
    pub name: String,
    /// What the tool is for, for the model.
    pub description: String,
    /// A short human-readable name for user interfaces (`Billing`): the MCP tool `title`
    /// (MCP specification 2025-06-18, "Tools") in grouped exposition. From
    /// `#[fusion::tool(title = "…")]`, else the doc comment's summary; `None` without either.
    pub title: Option<String>,
    /// The discriminator field naming the action (`action` by default); `None` for a
    /// single-function tool, whose arguments are the action's arguments.
    pub discriminator: Option<String>,
    /// The actions, in declaration order.
    pub actions: Vec<ActionDefinition>,
}

impl ToolDefinition {
    /// The qualified name of an action as models see it: `tool.action`, or `tool` alone for a
    /// single-function tool.
    pub fn qualified_name(&self, action: &str) -> String {
        self.action_name(Exposition::Grouped, action)
    }

    /// The name of action `action` of this tool in `exposition` ([`Exposition::action_name`]).
    pub(crate) fn action_name(&self, exposition: Exposition, action: &str) -> String {
        let action = self.discriminator.as_ref().map(|_| action);
        exposition.action_name(&self.name, action)
    }

    /// The action named `name`.
    pub fn action(&self, name: &str) -> Option<&ActionDefinition> {
        self.actions.iter().find(|a| a.name == name)
    }
}

/// The longest tool name fusion serves, in characters.
pub(crate) const MAX_TOOL_NAME_LEN: usize = 64;

/// Why a name cannot be an MCP tool name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NameError {
    /// The name is empty.
    #[error("it is empty")]
    Empty,
    /// The name contains a character other than ASCII letters, digits, `_` and `-`.
    #[error("it contains `{}`{}", .0.escape_debug(), if *.0 == '.' {
        ": MCP allows dots, but the Anthropic and OpenAI APIs do not"
    } else {
        ""
    })]
    Character(char),
    /// The name is longer than [`MAX_TOOL_NAME_LEN`]; the length in characters.
    #[error("it is {0} characters long: the Anthropic and OpenAI APIs accept at most {max}", max = MAX_TOOL_NAME_LEN)]
    TooLong(usize),
}

/// Checks `name` against the tool-name rule fusion serves: `^[a-zA-Z0-9_-]{1,64}$`.
///
/// MCP allows 1 to 128 characters of `[A-Za-z0-9_.-]` (MCP specification 2025-06-18,
/// "Tools", "Tool names"); the Anthropic and OpenAI APIs accept `^[a-zA-Z0-9_-]{1,64}$` only,
/// and refuse the whole tool list when one name breaks it, so fusion holds every name to the
/// stricter rule. `#[fusion::tool]` applies the same rule at compile time.
pub(crate) fn check_tool_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Err(NameError::Character(bad));
    }
    // Only ASCII is left: bytes are characters.
    match name.len() {
        len if len > MAX_TOOL_NAME_LEN => Err(NameError::TooLong(len)),
        _ => Ok(()),
    }
}

/// The input schema of an action could not be compiled: it is not a valid JSON Schema, or it
/// references something outside itself. Raised at startup by [`ArgumentValidator::new`](crate::validation::ArgumentValidator::new), never
/// on a call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid input schema for action `{action}`: {message}")]
pub struct SchemaError {
    action: String,
    message: String,
}

impl SchemaError {
    /// A schema error of `action` with `message` (for checks made outside the compiler).
    pub(crate) fn new(action: impl Into<String>, message: impl Into<String>) -> SchemaError {
        SchemaError {
            action: action.into(),
            message: message.into(),
        }
    }

    /// The action whose schema failed.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// What the schema compiler said.
    pub fn message(&self) -> &str {
        &self.message
    }
}

#[cfg(test)]
mod tests {
    use super::{NameError, check_tool_name};

    /// The cases `fusion-macros` checks its copy of the rule against (`tool/name.rs`).
    #[test]
    fn tool_names_suit_mcp_and_llm_apis() {
        for good in ["billing", "billing_list-2", "A9", "x", &"a".repeat(64)] {
            assert_eq!(check_tool_name(good), Ok(()), "{good}");
        }
        for (bad, error) in [
            ("", NameError::Empty),
            ("billing.list", NameError::Character('.')),
            ("list invoices", NameError::Character(' ')),
            ("café", NameError::Character('é')),
            ("a/b", NameError::Character('/')),
            (&"a".repeat(65), NameError::TooLong(65)),
            (&"a".repeat(129), NameError::TooLong(129)),
        ] {
            assert_eq!(check_tool_name(bad), Err(error), "{bad}");
        }
    }

    #[test]
    fn name_errors_say_what_is_wrong() {
        assert_eq!(
            NameError::Character('.').to_string(),
            "it contains `.`: MCP allows dots, but the Anthropic and OpenAI APIs do not"
        );
        assert_eq!(NameError::Character('\n').to_string(), "it contains `\\n`");
        assert_eq!(
            NameError::TooLong(70).to_string(),
            "it is 70 characters long: the Anthropic and OpenAI APIs accept at most 64"
        );
    }
}
