//! Items generated code reaches the runtime through (`::fusion::__private::…`). Not public API:
//! no stability promise. Re-exports only: each item lives and is tested in the module it
//! belongs to, so expansions stay short.

pub use ::core;
pub use ::schemars;
pub use ::serde;
pub use ::serde_json;
pub use ::std;
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
pub use crate::runtime::tool::{PreparedCall, Tool, ToolCall};
pub use crate::{ErrorCategory, ErrorCode, Severity, ToolError, ToolResponse};

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
