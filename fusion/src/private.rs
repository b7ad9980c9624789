//! Items generated code reaches the runtime through (`::fusion::__private::…`). Not public API:
//! no stability promise. Re-exports only, but for the runtime cell: each item lives and is
//! tested in the module it belongs to, so expansions stay short.

pub use ::core;
pub use ::schemars;
pub use ::serde;
pub use ::serde_json;
pub use ::std;
use ::std::any::TypeId;
use ::std::sync::Arc;
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
pub use crate::model::result_fit::{Paging, ResultFit, ResultLimit};
pub use crate::model::schema::InputSchemas;
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
pub type RuntimeCell = OnceLock<::core::result::Result<Arc<ToolRuntime>, SchemaError>>;

/// The runtime of tool type `T`, kept in `cell` at the first call: the one built when the
/// tool was registered, else (a tool called directly) built now from its definition. A schema
/// that does not compile becomes an `INTERNAL_ERROR` response (logged), never a panic.
/// Generated code: `runtime::<Self>(&__FUSION_RUNTIME, Self::__fusion_definition)?`.
pub fn runtime<T: 'static>(
    cell: &'static RuntimeCell,
    definition: impl FnOnce() -> ToolDefinition,
) -> ::core::result::Result<&'static ToolRuntime, ToolResponse> {
    let built = cell.get_or_init(|| match ToolRuntime::registered(TypeId::of::<T>()) {
        Some(runtime) => Ok(runtime),
        None => ToolRuntime::new(&definition()).map(Arc::new),
    });
    match built {
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
                task: false,
                task_required: false,
                task_deferred: false,
                strict_json: false,
                result: Default::default(),
            }],
        };
        let first = runtime::<()>(&CELL, definition).unwrap() as *const ToolRuntime;
        let second =
            runtime::<()>(&CELL, || unreachable!("built already")).unwrap() as *const ToolRuntime;
        assert_eq!(first, second);
    }

    #[test]
    fn a_registered_tools_calls_use_the_runtime_built_at_registration() {
        struct Registered;
        static CELL: RuntimeCell = RuntimeCell::new();
        let kind = TypeId::of::<Registered>();
        let definition = ToolDefinition {
            name: "calc".into(),
            description: String::new(),
            title: None,
            discriminator: None,
            actions: Vec::new(),
        };
        ToolRuntime::register(kind, Arc::new(ToolRuntime::new(&definition).unwrap()));
        let registered = ToolRuntime::registered(kind).unwrap();
        let used = runtime::<Registered>(&CELL, || unreachable!("built at registration"));
        assert!(std::ptr::eq(used.unwrap(), &*registered));
    }
}
