//! Items generated code reaches the runtime through (`::fusion::__private::…`). Not public API:
//! no stability promise. Behaviour lives here, unit-tested once, so expansions stay short.
//!
//! Several helpers use autoref-based specialization: generated code calls a method on several
//! references to a borrowed value (`(&&&Out(&value))`); method resolution tries the receiver
//! with the most references first, so the impl on the most references that the concrete type
//! satisfies wins. The method returns a tag that then consumes the value. This lets an action
//! return a `String` verbatim, `()` as "OK" and anything `Serialize` as JSON, and lets an
//! arguments type be validated with `validator` only when it implements `Validate`.

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
pub use ::validator;

pub use crate::dispatch::{Router, ToolRuntime, catch_panics, flat_input_schema};
pub use crate::tool::{
    ActionDefinition, Annotations, BoxFuture, ErrorContract, RequestContext, Tool, ToolDefinition,
};
pub use crate::{ErrorCategory, ErrorCode, Severity, ToolError, ToolResponse};

use serde::Serialize;

/// Borrows an action's successful return value to pick how it renders (see the module
/// docs); the returned tag then consumes the value. Generated code:
/// `(&&&Out(&value)).__fusion_render_kind().render(value)`.
pub struct Out<'a, T>(pub &'a T);

/// Renders an action's own `ToolResponse` as-is.
pub struct ResponseTag;
impl ResponseTag {
    /// The response, unchanged.
    pub fn render(self, value: ToolResponse) -> ToolResponse {
        value
    }
}

/// Renders `String` and `&str` verbatim.
pub struct TextTag;
impl TextTag {
    /// A text response.
    pub fn render(self, value: impl Into<String>) -> ToolResponse {
        ToolResponse::text(value)
    }
}

/// Renders `()` as `OK`.
pub struct UnitTag;
impl UnitTag {
    /// The text `OK`.
    pub fn render(self, _: ()) -> ToolResponse {
        ToolResponse::text("OK")
    }
}

/// Renders anything else `Serialize` as compact JSON text.
pub struct JsonTag;
impl JsonTag {
    /// A JSON text response (an unserializable value becomes `INTERNAL_ERROR`).
    pub fn render<T: Serialize>(self, value: T) -> ToolResponse {
        ToolResponse::json(&value)
    }
}

/// Picks [`ResponseTag`].
pub trait ResponseKind {
    /// The tag.
    fn __fusion_render_kind(self) -> ResponseTag;
}
impl ResponseKind for &&&Out<'_, ToolResponse> {
    fn __fusion_render_kind(self) -> ResponseTag {
        ResponseTag
    }
}

/// Picks [`TextTag`].
pub trait TextKind {
    /// The tag.
    fn __fusion_render_kind(self) -> TextTag;
}
impl TextKind for &&Out<'_, String> {
    fn __fusion_render_kind(self) -> TextTag {
        TextTag
    }
}
impl TextKind for &&Out<'_, &str> {
    fn __fusion_render_kind(self) -> TextTag {
        TextTag
    }
}

/// Picks [`UnitTag`].
pub trait UnitKind {
    /// The tag.
    fn __fusion_render_kind(self) -> UnitTag;
}
impl UnitKind for &&Out<'_, ()> {
    fn __fusion_render_kind(self) -> UnitTag {
        UnitTag
    }
}

/// Picks [`JsonTag`].
pub trait JsonKind {
    /// The tag.
    fn __fusion_render_kind(self) -> JsonTag;
}
impl<T: Serialize> JsonKind for &Out<'_, T> {
    fn __fusion_render_kind(self) -> JsonTag {
        JsonTag
    }
}

/// Borrows an action's error to pick how it converts: errors with a contract (`ToolError`,
/// `#[derive(ToolErrors)]` types, `anyhow::Error`, boxed errors) keep it; any other
/// `std::error::Error` becomes `INTERNAL_ERROR`. Generated code:
/// `(&&ErrOf(&error)).__fusion_error_kind().convert(error)`.
pub struct ErrOf<'a, E>(pub &'a E);

/// Converts errors with a contract.
pub struct ContractTag;
impl ContractTag {
    /// The error's own envelope.
    pub fn convert<E: Into<ToolError>>(self, error: E) -> ToolError {
        error.into()
    }
}

/// Converts errors without a contract: `INTERNAL_ERROR`, cause logged.
pub struct InternalTag;
impl InternalTag {
    /// `INTERNAL_ERROR` with an error id; the chain goes to the log.
    pub fn convert<E: std::error::Error + 'static>(self, error: E) -> ToolError {
        ToolError::from_internal(&error)
    }
}

/// Picks [`ContractTag`].
pub trait ContractKind {
    /// The tag.
    fn __fusion_error_kind(self) -> ContractTag;
}
impl<E: Into<ToolError>> ContractKind for &&ErrOf<'_, E> {
    fn __fusion_error_kind(self) -> ContractTag {
        ContractTag
    }
}

/// Picks [`InternalTag`].
pub trait InternalKind {
    /// The tag.
    fn __fusion_error_kind(self) -> InternalTag;
}
impl<E: std::error::Error + 'static> InternalKind for &ErrOf<'_, E> {
    fn __fusion_error_kind(self) -> InternalTag {
        InternalTag
    }
}

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

pub use ::std::sync::OnceLock;

/// The tool's runtime, built at the first call from its definition. A schema that does not
/// compile becomes an `INTERNAL_ERROR` response (logged), never a panic.
pub fn runtime(
    cell: &'static OnceLock<::core::result::Result<ToolRuntime, crate::validation::SchemaError>>,
    definition: impl FnOnce() -> ToolDefinition,
) -> ::core::result::Result<&'static ToolRuntime, ToolResponse> {
    match cell.get_or_init(|| ToolRuntime::new(&definition())) {
        Ok(runtime) => Ok(runtime),
        Err(error) => Err(ToolResponse::error(ToolError::from_internal(error))),
    }
}

/// A compile-time reference to an action, emitted by `#[fusion::tool]` for every action as
/// the hidden associated constant `__fusion_action_<method>`, so that
/// `#[tool_error(actions(Billing::list_invoices))]` is checked by the compiler.
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
        if self.single {
            self.tool.to_owned()
        } else {
            format!("{}.{}", self.tool, self.action)
        }
    }
}

/// The error contracts of an action's error type `E`: those `#[derive(ToolErrors)]` declares,
/// none for other types. Generated code: `(&&Contracts::<E>::NEW).__fusion_contracts()`.
pub struct Contracts<E>(::core::marker::PhantomData<fn() -> E>);

impl<E> Contracts<E> {
    /// The probe value.
    pub const NEW: Contracts<E> = Contracts(::core::marker::PhantomData);
}

/// `E` declares its contract.
pub trait DeclaredContracts {
    /// The declared contracts.
    fn __fusion_contracts(&self) -> Vec<ErrorContract>;
}
impl<E: crate::ToolErrors> DeclaredContracts for &Contracts<E> {
    fn __fusion_contracts(&self) -> Vec<ErrorContract> {
        E::error_contracts()
    }
}

/// `E` declares nothing (`ToolError`, `anyhow::Error`, …).
pub trait NoContracts {
    /// No contracts.
    fn __fusion_contracts(&self) -> Vec<ErrorContract> {
        Vec::new()
    }
}
impl<E> NoContracts for Contracts<E> {}

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

/// The trait `#[derive(ToolErrors)]` implements (named here so expansions need no `use`).
pub use crate::tool::ToolErrors;

/// A `#[retry_after]` field's delay in whole seconds, the unit of `<retry_after>` (SPEC
/// section 1). Implemented for the integer types (a count of seconds; negative means unset),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Invoice {
        id: &'static str,
    }

    /// What generated code writes for a successful value.
    macro_rules! render {
        ($value:expr) => {{
            let value = $value;
            (&&&Out(&value)).__fusion_render_kind().render(value)
        }};
    }

    /// What generated code writes for an error value.
    macro_rules! convert {
        ($error:expr) => {{
            let error = $error;
            (&&ErrOf(&error)).__fusion_error_kind().convert(error)
        }};
    }

    #[test]
    fn success_values_pick_the_most_specific_rendering() {
        assert_eq!(render!(String::from("plain")).payload(), Some("plain"));
        assert_eq!(render!("text").payload(), Some("text"));
        assert_eq!(render!(()).payload(), Some("OK"));
        assert_eq!(
            render!(Invoice { id: "inv_1" }).payload(),
            Some(r#"{"id":"inv_1"}"#)
        );
        assert_eq!(render!(vec![1, 2]).payload(), Some("[1,2]"));
        let own = ToolResponse::error(ToolError::not_found("x"));
        assert_eq!(render!(own.clone()), own);
    }

    #[derive(Debug)]
    struct Plain;
    impl std::fmt::Display for Plain {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("secret detail")
        }
    }
    impl std::error::Error for Plain {}

    #[test]
    fn errors_without_a_contract_become_internal() {
        let e = convert!(Plain);
        assert_eq!(*e.code(), ErrorCode::InternalError);
        assert!(!e.to_xml().contains("secret detail"));
        let e = convert!(ToolError::not_found("x"));
        assert_eq!(*e.code(), ErrorCode::NotFound);
        let e = convert!(anyhow::anyhow!("x"));
        assert_eq!(*e.code(), ErrorCode::InternalError);
        let e = convert!(std::io::Error::other("disk"));
        assert_eq!(*e.code(), ErrorCode::InternalError);
    }

    #[derive(validator::Validate)]
    struct Checked {
        #[validate(range(min = 1))]
        n: u32,
    }
    struct Unchecked;

    #[test]
    fn validation_runs_only_when_implemented() {
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
}

// --- Added for `#[fusion::tool]` ------------------------------------------------------------

pub use crate::validation::SchemaError;

/// The cell a generated `Tool::call` keeps its [`ToolRuntime`] in, for [`runtime`]. Generated
/// code declares `static __FUSION_RUNTIME: RuntimeCell = RuntimeCell::new();` inside the `call`
/// body, so a tool on a generic impl still compiles (a static cannot name the impl's type
/// parameters; the macro rejects arguments types that depend on them, so one runtime fits
/// every instantiation).
pub type RuntimeCell = OnceLock<::core::result::Result<ToolRuntime, SchemaError>>;

/// The two halves of an action's `Result` return type, reached through whatever alias the
/// action wrote (`anyhow::Result<T>` names no error type): generated code writes
/// `Contracts::<<R as ResultParts>::Err>::NEW`.
pub trait ResultParts {
    /// The success type `T`.
    type Ok;
    /// The error type `E`.
    type Err;
}
impl<T, E> ResultParts for ::core::result::Result<T, E> {
    type Ok = T;
    type Err = E;
}

/// Every autoref-specialization trait above, for one glob import in generated code
/// (`use ::fusion::__private::autoref::*;`): method-call syntax only finds trait methods whose
/// trait is in scope.
pub mod autoref {
    pub use super::{
        ContractKind, DeclaredContracts, InternalChain, InternalDisplay, InternalKind, JsonKind,
        NoContracts, NoValidator, ResponseKind, TextKind, UnitKind, ViaValidator,
    };
}

#[cfg(test)]
mod tool_macro_tests {
    use super::autoref::*;
    use super::*;

    #[test]
    fn result_parts_names_the_error_type_of_an_alias() {
        type Alias<T> = ::core::result::Result<T, ToolError>;
        fn error_type<R: ResultParts>() -> &'static str {
            ::core::any::type_name::<R::Err>()
        }
        assert_eq!(
            error_type::<Alias<u8>>(),
            ::core::any::type_name::<ToolError>()
        );
        assert_eq!(
            error_type::<anyhow::Result<()>>(),
            ::core::any::type_name::<anyhow::Error>()
        );
    }

    struct Declared;
    impl From<Declared> for ToolError {
        fn from(_: Declared) -> ToolError {
            ToolError::not_found("x")
        }
    }
    impl crate::ToolErrors for Declared {
        fn error_contracts() -> Vec<ErrorContract> {
            vec![ErrorContract::new(
                ErrorCode::NotFound,
                Severity::Error,
                None,
                None,
            )]
        }
    }

    #[test]
    fn contracts_come_through_the_alias_projection() {
        type R = ::core::result::Result<(), Declared>;
        let declared = (&&Contracts::<<R as ResultParts>::Err>::NEW).__fusion_contracts();
        assert_eq!(declared.len(), 1);
        let none =
            (&&Contracts::<<anyhow::Result<()> as ResultParts>::Err>::NEW).__fusion_contracts();
        assert!(none.is_empty());
    }

    #[test]
    fn the_runtime_cell_builds_once() {
        static CELL: RuntimeCell = RuntimeCell::new();
        let definition = || ToolDefinition {
            name: "calc".into(),
            description: String::new(),
            discriminator: None,
            actions: vec![ActionDefinition {
                name: "calc".into(),
                description: String::new(),
                input_schema: empty_object_schema(),
                annotations: Annotations::default(),
                errors: Vec::new(),
                secret_fields: Vec::new(),
            }],
        };
        let first = runtime(&CELL, definition).unwrap() as *const ToolRuntime;
        let second =
            runtime(&CELL, || unreachable!("built already")).unwrap() as *const ToolRuntime;
        assert_eq!(first, second);
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
