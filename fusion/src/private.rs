//! Items generated code reaches the runtime through (`::fusion::__private::…`). Not public API:
//! no stability promise. Re-exports only, but for the runtime cell: each item lives and is
//! tested in the module it belongs to, so expansions stay short.

pub use ::core;
pub use ::schemars;
pub use ::serde;
pub use ::serde_json;
pub use ::std;
pub use ::std::sync::OnceLock;
pub use ::validator;

pub use crate::envelope::error::derive::{
    Internal, InternalChain, InternalDisplay, RetryAfterSecs,
};
pub use crate::guard::{ConcurrencyLimit, GuardSpec, RateKey, RateLimit, ToolGuards};
pub use crate::model::action_ref::{ActionLookup, ActionRef, ActionSearch};
pub use crate::model::arguments::{Arguments, NotAnObject, ObjectArguments, Validate};
pub use crate::model::context::RequestContext;
pub use crate::model::declared::{Declared, ErrorOf, declared_contracts};
pub use crate::model::definition::{
    ActionDefinition, Annotations, ErrorContract, ToolDefinition, ToolErrors,
};
pub use crate::model::output::{
    IntoToolResponse, Outputs, StructuredOutput, respond, respond_structured,
};
pub use crate::model::schema::generate::{empty_object_schema, output_schema_for, schema_for};
pub use crate::runtime::dispatch::ToolRuntime;
pub use crate::runtime::tool::{PreparedCall, Tool};
pub use crate::validation::SchemaError;
pub use crate::{ErrorCategory, ErrorCode, Severity, ToolError, ToolResponse};

/// The cell a generated `Tool::prepare` keeps its [`ToolRuntime`] in, for [`runtime`].
/// Generated code declares `static __FUSION_RUNTIME: RuntimeCell = RuntimeCell::new();` inside
/// the `prepare` body, so a tool on a generic impl still compiles (a static cannot name the
/// impl's type parameters; the macro rejects arguments types that depend on them, so one
/// runtime fits every instantiation).
pub type RuntimeCell = OnceLock<::core::result::Result<ToolRuntime, SchemaError>>;

/// The tool's runtime, built at the first call from its definition. A schema that does not
/// compile becomes an `INTERNAL_ERROR` response (logged), never a panic.
pub fn runtime(
    cell: &'static RuntimeCell,
    definition: impl FnOnce() -> ToolDefinition,
) -> ::core::result::Result<&'static ToolRuntime, ToolResponse> {
    match cell.get_or_init(|| ToolRuntime::new(&definition())) {
        Ok(runtime) => Ok(runtime),
        Err(error) => Err(ToolResponse::error(ToolError::from_internal(error))),
    }
}

/// The autoref-specialization traits (see `model/arguments.rs`), for one glob import in
/// generated code (`use ::fusion::__private::autoref::*;`): method-call syntax only finds
/// trait methods whose trait is in scope.
pub mod autoref {
    pub use super::{InternalChain, InternalDisplay};
    pub use crate::model::arguments::{
        AnyArguments, NoValidator, NonObjectArguments, ViaValidator,
    };
    pub use crate::model::declared::{CheckDeclared, SkipDeclared};
    pub use crate::model::output::{
        DeclaredContracts, DeclaredOutputSchema, NoContracts, NoOutputSchema,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_cell_builds_once() {
        static CELL: RuntimeCell = RuntimeCell::new();
        let definition = || ToolDefinition {
            name: "calc".into(),
            description: String::new(),
            title: None,
            discriminator: None,
            actions: vec![ActionDefinition {
                name: "calc".into(),
                description: String::new(),
                title: None,
                input_schema: empty_object_schema(),
                annotations: Annotations::default(),
                errors: Vec::new(),
                secret_fields: Vec::new(),
                output_schema: None,
                scopes: Vec::new(),
            }],
        };
        let first = runtime(&CELL, definition).unwrap() as *const ToolRuntime;
        let second =
            runtime(&CELL, || unreachable!("built already")).unwrap() as *const ToolRuntime;
        assert_eq!(first, second);
    }
}
