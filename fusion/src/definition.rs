//! What a tool tells the world about itself: its definition (name, description,
//! discriminator), its actions' definitions (input and output schemas, annotations) and the
//! error contract each action declares.

use serde_json::{Map, Value};

use crate::code::{ErrorCategory, ErrorCode, Severity};

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
    /// declaration order: feeds the tool definition and the lockfile. None by default.
    fn error_contracts() -> Vec<ErrorContract> {
        Vec::new()
    }
}

/// MCP tool annotations (MCP specification 2025-06-18, "Tool annotations"): hints about an
/// action's behaviour. `None` leaves the hint unset, so clients apply the MCP defaults
/// (not read-only, destructive, not idempotent, open world).
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

/// One action of a tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ActionDefinition {
    /// The action's name, the discriminator value (`list_invoices`). For a single-function
    /// tool, the tool's own name.
    pub name: String,
    /// What the action does, for the model (from the doc comment or `description = "…"`).
    pub description: String,
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
}

/// A tool: a name, a description and its actions.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    /// The MCP tool name (`billing`).
    pub name: String,
    /// What the tool is for, for the model.
    pub description: String,
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
        match self.discriminator {
            Some(_) => format!("{}.{}", self.name, action),
            None => self.name.clone(),
        }
    }

    /// The action named `name`.
    pub fn action(&self, name: &str) -> Option<&ActionDefinition> {
        self.actions.iter().find(|a| a.name == name)
    }
}
