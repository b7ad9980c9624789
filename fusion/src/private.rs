//! Items generated code reaches the runtime through (`::fusion::__private::…`). Not public API:
//! no stability promise. Behaviour lives here and in the modules these re-export, unit-tested
//! once, so expansions stay short.
//!
//! Two helpers use autoref-based specialization: generated code calls a method on several
//! references to a borrowed value (`(&&Validate(&value))`); method resolution tries the receiver
//! with the most references first, so the impl on the most references that the concrete type
//! satisfies wins. This runs `validator` rules only for arguments types that have them, and
//! logs a `#[tool_error(internal)]` variant's error chain when it has one.

// Tests write the probes exactly as generated code does; the "needless" borrows are what
// selects the impl.
#![cfg_attr(
    test,
    allow(
        clippy::needless_borrow,
        reason = "autoref specialization: the extra references pick the impl"
    )
)]

pub use ::core;
pub use ::schemars;
pub use ::serde;
pub use ::serde_json;
pub use ::std;
use ::std::any::TypeId;
use ::std::sync::Arc;
pub use ::std::sync::OnceLock;
pub use ::validator;

pub use crate::guard::{ConcurrencyLimit, GuardSpec, RateKey, RateLimit, ToolGuards};
pub use crate::model::arguments::{Arguments, NotAnObject, ObjectArguments};
pub use crate::model::context::RequestContext;
pub use crate::model::declared::{Declared, ErrorOf, declared_contracts};
pub use crate::model::definition::{
    ActionDefinition, Annotations, ErrorContract, ToolDefinition, ToolErrors,
};
pub use crate::model::output::{IntoToolResponse, StructuredOutput};
pub use crate::runtime::dispatch::ToolRuntime;
pub use crate::runtime::tool::{PreparedCall, Tool};
pub use crate::validation::SchemaError;
pub use crate::{ErrorCategory, ErrorCode, Severity, ToolError, ToolResponse};

/// An action's output as the response a client receives. Generated code wraps each call of
/// an action in it, spanned on the action's return type, so a type that is not an output
/// is reported there.
pub fn respond<R: IntoToolResponse>(output: R) -> ToolResponse {
    output.into_tool_response()
}

/// [`respond`] for an action with `#[action(output_schema)]`: the success value as
/// `structuredContent` too.
pub fn respond_structured<R: StructuredOutput>(output: R) -> ToolResponse {
    output.into_structured_response()
}

/// What an action's definition reads off its return type `R`: the error contracts it declares
/// (those of `E` for `Result<T, E>`) and its output schema. Probed rather than required, so an
/// `R` that is no output is reported once, where the action's call is generated. Generated
/// code: `(&&Outputs::<R>::NEW).__fusion_contracts()`.
pub struct Outputs<R>(::core::marker::PhantomData<fn() -> R>);

impl<R> Outputs<R> {
    /// The probe value.
    pub const NEW: Outputs<R> = Outputs(::core::marker::PhantomData);
}

/// `R` is an output: its contracts.
pub trait DeclaredContracts {
    /// The error contracts of `R`.
    fn __fusion_contracts(&self) -> Vec<ErrorContract>;
}
impl<R: IntoToolResponse> DeclaredContracts for &Outputs<R> {
    fn __fusion_contracts(&self) -> Vec<ErrorContract> {
        R::error_contracts()
    }
}

/// `R` is no output (reported elsewhere): no contracts.
pub trait NoContracts {
    /// None.
    fn __fusion_contracts(&self) -> Vec<ErrorContract> {
        Vec::new()
    }
}
impl<R> NoContracts for Outputs<R> {}

/// `R` has a structured success value: its schema.
pub trait DeclaredOutputSchema {
    /// The output schema of `R`.
    fn __fusion_output_schema(
        &self,
    ) -> Option<::serde_json::Map<::std::string::String, ::serde_json::Value>>;
}
impl<R: StructuredOutput> DeclaredOutputSchema for &Outputs<R> {
    fn __fusion_output_schema(
        &self,
    ) -> Option<::serde_json::Map<::std::string::String, ::serde_json::Value>> {
        Some(output_schema_for::<R::Success>())
    }
}

/// `R` has none (reported elsewhere).
pub trait NoOutputSchema {
    /// None.
    fn __fusion_output_schema(
        &self,
    ) -> Option<::serde_json::Map<::std::string::String, ::serde_json::Value>> {
        None
    }
}
impl<R> NoOutputSchema for Outputs<R> {}

/// The cell a generated `Tool::prepare` keeps its [`ToolRuntime`] in, for [`runtime`].
/// Generated code declares `static __FUSION_RUNTIME: RuntimeCell = RuntimeCell::new();` inside
/// the `prepare` body, so a tool on a generic impl still compiles (a static cannot name the
/// impl's type parameters; the macro rejects arguments types that depend on them, so one
/// runtime fits every instantiation).
pub type RuntimeCell = OnceLock<::core::result::Result<Arc<ToolRuntime>, SchemaError>>;

/// Runs `validator::Validate` on a parsed arguments value when its type implements it.
/// Generated code: `(&&Validate(&arguments)).__fusion_validate()`.
pub struct Validate<'a, T>(pub &'a T);

/// The arguments type implements `validator::Validate`.
pub trait ViaValidator {
    /// The rule violations, if any.
    fn __fusion_validate(&self) -> Option<validator::ValidationErrors>;
}
impl<T: validator::Validate> ViaValidator for &Validate<'_, T> {
    fn __fusion_validate(&self) -> Option<validator::ValidationErrors> {
        self.0.validate().err()
    }
}

/// The arguments type has no `validator` rules.
pub trait NoValidator {
    /// Always `None`.
    fn __fusion_validate(&self) -> Option<validator::ValidationErrors> {
        None
    }
}
impl<T> NoValidator for Validate<'_, T> {}

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

/// A compile-time reference to an action, emitted by `#[fusion::tool]` for every action as
/// the hidden associated constant `__fusion_action_<method>`, and found by method name through
/// `__fusion_action_named`, so that `#[tool_error(actions(Billing::list_invoices))]` is checked
/// by the compiler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActionRef {
    /// The tool's name (`billing`).
    pub tool: &'static str,
    /// The action's name (`list_invoices`); for a single-function tool, the tool's name.
    pub action: &'static str,
    /// Whether the tool is a single-function tool (no discriminator).
    pub single: bool,
}

impl ActionRef {
    /// The name models call it by in grouped exposition: `tool.action`, or `tool` alone.
    pub fn qualified(self) -> ::std::string::String {
        let action = (!self.single).then_some(self.action);
        crate::model::exposition::Exposition::Grouped.action_name(self.tool, action)
    }
}

/// What `Tool::__fusion_action_named(method)` answers at compile time: the action of that
/// method, or the message of the compile error `#[derive(ToolErrors)]` raises for
/// `actions(Tool::misspelt)`, with the closest action method as its "did you mean".
#[derive(Clone, Copy, Debug)]
pub enum ActionLookup {
    /// The method is an action of the tool.
    Found(ActionRef),
    /// No action method has that name: the message to fail compilation with.
    Missing(&'static str),
}

/// The search behind `__fusion_action_named`, offered each action method in turn by the code
/// `#[fusion::tool]` generates (one statement per action, so `#[cfg]` can remove one).
#[derive(Clone, Copy, Debug)]
pub struct ActionSearch<'m> {
    method: &'m str,
    found: Option<ActionRef>,
    /// The closest method so far: its edit distance and its "did you mean" message.
    closest: Option<(usize, &'static str)>,
}

impl<'m> ActionSearch<'m> {
    /// A search for the action method named `method`.
    pub const fn new(method: &'m str) -> ActionSearch<'m> {
        ActionSearch {
            method,
            found: None,
            closest: None,
        }
    }

    /// Offers the action method `name`: its action, and the message naming it as the
    /// "did you mean" when it is the closest.
    pub const fn offer(mut self, name: &str, action: ActionRef, hint: &'static str) -> Self {
        if bytes_eq(self.method.as_bytes(), name.as_bytes()) {
            self.found = Some(action);
            return self;
        }
        let distance = edit_distance(self.method.as_bytes(), name.as_bytes());
        let longest = if self.method.len() > name.len() {
            self.method.len()
        } else {
            name.len()
        };
        let close = distance <= 2 || distance * 3 <= longest;
        let closer = match self.closest {
            Some((best, _)) => distance < best,
            None => true,
        };
        if close && closer {
            self.closest = Some((distance, hint));
        }
        self
    }

    /// The action found, else the closest method's message, else `missing`.
    pub const fn finish(self, missing: &'static str) -> ActionLookup {
        match (self.found, self.closest) {
            (Some(action), _) => ActionLookup::Found(action),
            (None, Some((_, hint))) => ActionLookup::Missing(hint),
            (None, None) => ActionLookup::Missing(missing),
        }
    }
}

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Levenshtein distance over bytes, for names of at most 64 bytes (longer: `usize::MAX`).
const fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    const MAX: usize = 64;
    if a.len() > MAX || b.len() > MAX {
        return usize::MAX;
    }
    let mut row = [0usize; MAX + 1];
    let mut j = 0;
    while j <= b.len() {
        row[j] = j;
        j += 1;
    }
    let mut i = 1;
    while i <= a.len() {
        let mut diagonal = row[0];
        row[0] = i;
        let mut j = 1;
        while j <= b.len() {
            let above = row[j];
            let cost = if a[i - 1] == b[j - 1] { 0 } else { 1 };
            let mut best = diagonal + cost;
            if above + 1 < best {
                best = above + 1;
            }
            if row[j - 1] + 1 < best {
                best = row[j - 1] + 1;
            }
            row[j] = best;
            diagonal = above;
            j += 1;
        }
        i += 1;
    }
    row[b.len()]
}

/// Borrows a `#[tool_error(internal)]` variant's whole error value to log it: its error chain
/// when it implements `std::error::Error`, else its `Display`.
/// Generated code: `(&&Internal(&error)).__fusion_internal()`.
pub struct Internal<'a, E>(pub &'a E);

/// The value is a `std::error::Error`: log the chain.
pub trait InternalChain {
    /// `INTERNAL_ERROR` with an error id; the chain goes to the log.
    fn __fusion_internal(self) -> ToolError;
}
impl<E: std::error::Error + 'static> InternalChain for &&Internal<'_, E> {
    fn __fusion_internal(self) -> ToolError {
        ToolError::from_internal(self.0)
    }
}

/// The value only implements `Display`: log that.
pub trait InternalDisplay {
    /// `INTERNAL_ERROR` with an error id; the text goes to the log.
    fn __fusion_internal(self) -> ToolError;
}
impl<E: ::core::fmt::Display> InternalDisplay for &Internal<'_, E> {
    fn __fusion_internal(self) -> ToolError {
        crate::internal::from_display(self.0)
    }
}

/// The JSON Schema of an arguments type as an object map (what schemars generates, with
/// `$defs`), for [`ActionDefinition::input_schema`].
pub fn schema_for<T: ::schemars::JsonSchema>()
-> ::serde_json::Map<::std::string::String, ::serde_json::Value> {
    match ::serde_json::to_value(::schemars::schema_for!(T)) {
        Ok(::serde_json::Value::Object(map)) => map,
        // A boolean schema (`true`): any object.
        _ => empty_object_schema(),
    }
}

/// The JSON Schema of an action's success type `T`, for [`ActionDefinition::output_schema`]
/// (`#[action(output_schema)]`): schemars' *serialize* contract, because the server writes the
/// value (an `Option` field without `skip_serializing_if` is always present, and required), in
/// JSON Schema 2020-12 with `$defs`. Kept whatever its shape: a server checks that it is an
/// object schema (`serde_json::Value`'s, which accepts anything, is not) before advertising it.
pub fn output_schema_for<T: ::schemars::JsonSchema>()
-> ::serde_json::Map<::std::string::String, ::serde_json::Value> {
    let schema = ::schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    match ::serde_json::to_value(schema) {
        Ok(::serde_json::Value::Object(map)) => map,
        // A boolean schema: `{}` says the same (`true`), and is no object schema either.
        _ => ::serde_json::Map::new(),
    }
}

/// The schema of an action without arguments: an object with no properties.
pub fn empty_object_schema() -> ::serde_json::Map<::std::string::String, ::serde_json::Value> {
    let mut map = ::serde_json::Map::new();
    map.insert("type".into(), "object".into());
    map.insert(
        "properties".into(),
        ::serde_json::Value::Object(::serde_json::Map::new()),
    );
    map
}

// --- `#[derive(ToolErrors)]` ---------------------------------------------------------------

/// A `#[retry_after]` field's delay in whole seconds, the unit of `<retry_after>`.
/// Implemented for the integer types (a count of seconds; negative means unset),
/// `std::time::Duration` (rounded up, so 1.2 s is 2 s: a retry must not come early) and
/// `Option` of those (`None` means unset). Generated code:
/// `::fusion::__private::RetryAfterSecs::retry_after_secs(&field)`.
#[diagnostic::on_unimplemented(
    message = "`#[retry_after]` needs a whole number of seconds or a `std::time::Duration`, not `{Self}`",
    label = "not a retry delay",
    note = "use an integer type (seconds), `std::time::Duration`, or an `Option` of one"
)]
pub trait RetryAfterSecs {
    /// The delay in whole seconds; `0` means unset.
    fn retry_after_secs(&self) -> u64;
}

macro_rules! retry_after_unsigned {
    ($($ty:ty),*) => {$(
        impl RetryAfterSecs for $ty {
            fn retry_after_secs(&self) -> u64 {
                u64::try_from(*self).unwrap_or(u64::MAX)
            }
        }
    )*};
}
retry_after_unsigned!(u8, u16, u32, u64, u128, usize);

macro_rules! retry_after_signed {
    ($($ty:ty),*) => {$(
        impl RetryAfterSecs for $ty {
            fn retry_after_secs(&self) -> u64 {
                // Negative: no delay. Too large for u64: the largest delay.
                if *self < 0 { 0 } else { u64::try_from(*self).unwrap_or(u64::MAX) }
            }
        }
    )*};
}
retry_after_signed!(i8, i16, i32, i64, i128, isize);

impl RetryAfterSecs for ::core::time::Duration {
    fn retry_after_secs(&self) -> u64 {
        let whole = self.as_secs();
        if self.subsec_nanos() > 0 {
            whole.saturating_add(1)
        } else {
            whole
        }
    }
}

impl<T: RetryAfterSecs> RetryAfterSecs for Option<T> {
    fn retry_after_secs(&self) -> u64 {
        self.as_ref().map_or(0, T::retry_after_secs)
    }
}

impl<T: RetryAfterSecs + ?Sized> RetryAfterSecs for &T {
    fn retry_after_secs(&self) -> u64 {
        T::retry_after_secs(self)
    }
}

/// The autoref-specialization traits, for one glob import in generated code
/// (`use ::fusion::__private::autoref::*;`): method-call syntax only finds trait methods whose
/// trait is in scope.
pub mod autoref {
    pub use super::{
        DeclaredContracts, DeclaredOutputSchema, InternalChain, InternalDisplay, NoContracts,
        NoOutputSchema, NoValidator, ViaValidator,
    };
    pub use crate::model::arguments::{AnyArguments, NonObjectArguments};
    pub use crate::model::declared::{CheckDeclared, SkipDeclared};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(validator::Validate)]
    struct Checked {
        #[validate(range(min = 1))]
        n: u32,
    }
    struct Unchecked;

    #[derive(serde::Serialize, ::schemars::JsonSchema)]
    struct Total {
        currency: &'static str,
        amount: u64,
        note: Option<&'static str>,
    }

    #[test]
    fn validation_runs_only_when_implemented() {
        use super::autoref::*;
        assert!(
            (&&Validate(&Checked { n: 0 }))
                .__fusion_validate()
                .is_some()
        );
        assert!(
            (&&Validate(&Checked { n: 1 }))
                .__fusion_validate()
                .is_none()
        );
        assert!((&&Validate(&Unchecked)).__fusion_validate().is_none());
    }

    #[test]
    fn output_schemas_describe_the_serialized_form() {
        use super::autoref::*;
        let schema = (&&Outputs::<crate::Json<Total>>::NEW)
            .__fusion_output_schema()
            .unwrap();
        assert_eq!(schema["type"], "object");
        // Serialize contract: `note` is always written (as `null` when unset), so required.
        assert_eq!(
            schema["required"],
            serde_json::json!(["currency", "amount", "note"])
        );
        let list = (&&Outputs::<::core::result::Result<Vec<u8>, ToolError>>::NEW)
            .__fusion_output_schema()
            .unwrap();
        assert_eq!(list["type"], "array");
        // No structured success value: no schema (the call's generation reports it).
        assert!(
            (&&Outputs::<String>::NEW)
                .__fusion_output_schema()
                .is_none()
        );
        assert!((&&Outputs::<u8>::NEW).__fusion_contracts().is_empty());
        // `serde_json::Value` accepts anything: the boolean schema `true`, no object schema.
        assert!(
            output_schema_for::<serde_json::Value>()
                .get("type")
                .is_none()
        );
    }

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
        ToolRuntime::register(kind, ToolRuntime::new(&definition).unwrap());
        let registered = ToolRuntime::registered(kind).unwrap();
        let used = runtime::<Registered>(&CELL, || unreachable!("built at registration"));
        assert!(std::ptr::eq(used.unwrap(), &*registered));
    }
}

#[cfg(test)]
mod tool_errors_tests {
    use super::*;
    use std::time::Duration;

    fn retry_after_secs<T: RetryAfterSecs + ?Sized>(value: &T) -> u64 {
        value.retry_after_secs()
    }

    #[test]
    fn integer_delays_are_whole_seconds() {
        assert_eq!(retry_after_secs(&30u8), 30);
        assert_eq!(retry_after_secs(&30u64), 30);
        assert_eq!(retry_after_secs(&u128::MAX), u64::MAX);
        assert_eq!(retry_after_secs(&45i32), 45);
        assert_eq!(retry_after_secs(&-5i64), 0);
        assert_eq!(retry_after_secs(&i128::MAX), u64::MAX);
        assert_eq!(retry_after_secs(&7usize), 7);
    }

    #[test]
    fn durations_round_up_to_whole_seconds() {
        assert_eq!(retry_after_secs(&Duration::from_millis(1200)), 2);
        assert_eq!(retry_after_secs(&Duration::from_secs(3)), 3);
        assert_eq!(retry_after_secs(&Duration::from_nanos(1)), 1);
        assert_eq!(retry_after_secs(&Duration::ZERO), 0);
        assert_eq!(retry_after_secs(&Duration::MAX), u64::MAX);
    }

    #[test]
    fn options_and_references_delegate() {
        assert_eq!(retry_after_secs(&Some(Duration::from_millis(10))), 1);
        assert_eq!(retry_after_secs(&None::<u32>), 0);
        assert_eq!(retry_after_secs(&&12u16), 12);
    }
}
