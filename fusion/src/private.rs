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

pub use crate::dispatch::{Router, ToolRuntime, catch_panics, catch_panics_of};
pub use crate::guard::{ConcurrencyLimit, GuardSpec, RateKey, RateLimit, ToolGuards};
pub use crate::schema::flat_input_schema;
pub use crate::tool::{
    ActionDefinition, Annotations, BoxFuture, CallFuture, ErrorContract, RequestContext, StartCall,
    Started, Tool, ToolDefinition,
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
    pub fn render<T: SuccessValue>(self, value: T) -> ToolResponse {
        ToolResponse::json(&value)
    }
}

/// `Serialize`, under a name whose unmet bound tells an action's author what to implement (the
/// JSON rendering is picked for every type, so a missing `Serialize` is reported here, on the
/// return type, rather than as a missing method of an internal probe).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an action's success value: implement `serde::Serialize`, or return `String`, `()` or `fusion::ToolResponse`",
    label = "not `serde::Serialize`"
)]
pub trait SuccessValue: Serialize {}
impl<T: Serialize> SuccessValue for T {}

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

/// Stands in for the rendering of a `Result` that reached the plain-value path: the macro reads
/// a return type as fallible by its name (`Result<T, E>`, or an alias whose name ends in
/// `Result`), so `type R<T> = Result<T, E>` returned as `R<T>` would otherwise render `Err` as a
/// JSON success. Its `render` requires [`SpelledResult`], which nothing implements: the crate
/// does not compile, and rustc's message says how to write the return type.
pub struct ResultTag;
impl ResultTag {
    /// Never called: the bound is never satisfied.
    pub fn render<R: SpelledResult>(self, value: R) -> ToolResponse {
        value.__fusion_never()
    }

    /// The same check for an action with `output_schema`, which renders without a tag.
    pub fn check<R: SpelledResult>(self, _: &R) {}
}

/// Implemented by no type: the bound that makes a `Result` behind an alias the macro cannot
/// read a compile error (see [`ResultTag`]).
#[diagnostic::on_unimplemented(
    message = "an action returning `{Self}` must spell its return type `Result<T, E>`, or use an alias whose name ends in `Result`",
    label = "read as a plain value, so `Err` would be answered as a success",
    note = "`#[fusion::tool]` recognizes a fallible action by the name of its return type: write `Result<T, E>` or rename the alias (`type BillingResult<T> = Result<T, BillingError>;`)"
)]
pub trait SpelledResult {
    /// Never called.
    fn __fusion_never(self) -> ToolResponse;
}

/// Picks [`ResultTag`] (more specific than [`JsonKind`], which every `Result` of serializable
/// halves would otherwise take).
pub trait ResultKind {
    /// The tag.
    fn __fusion_render_kind(self) -> ResultTag;
}
impl<T, E> ResultKind for &&Out<'_, ::core::result::Result<T, E>> {
    fn __fusion_render_kind(self) -> ResultTag {
        ResultTag
    }
}

/// What an action with `output_schema` checks its plain success value with: a `Result` picks
/// [`ResultTag`] (see there), anything else [`PlainTag`]. Generated code:
/// `(&&Plain(&value)).__fusion_plain_kind().check(&value)`.
pub struct Plain<'a, T>(pub &'a T);

/// Accepts any value that is not a `Result`.
pub struct PlainTag;
impl PlainTag {
    /// Nothing to check.
    pub fn check<T>(self, _: &T) {}
}

/// Picks [`ResultTag`] for a `Result`.
pub trait PlainResultKind {
    /// The tag.
    fn __fusion_plain_kind(self) -> ResultTag;
}
impl<T, E> PlainResultKind for &&Plain<'_, ::core::result::Result<T, E>> {
    fn __fusion_plain_kind(self) -> ResultTag {
        ResultTag
    }
}

/// Picks [`PlainTag`] for anything else.
pub trait PlainKind {
    /// The tag.
    fn __fusion_plain_kind(self) -> PlainTag;
}
impl<T> PlainKind for &Plain<'_, T> {
    fn __fusion_plain_kind(self) -> PlainTag {
        PlainTag
    }
}

/// Picks [`JsonTag`] for every other type (its `render` requires [`SuccessValue`]).
pub trait JsonKind {
    /// The tag.
    fn __fusion_render_kind(self) -> JsonTag;
}
impl<T> JsonKind for &Out<'_, T> {
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
    pub fn convert<E: ErrorValue>(self, error: E) -> ToolError {
        ToolError::from_internal(&error)
    }
}

/// `std::error::Error + 'static`, under a name whose unmet bound tells an action's author what
/// to implement (see [`SuccessValue`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an action's error: implement `std::error::Error`, or convert it into `fusion::ToolError` (`#[derive(fusion::ToolErrors)]`, or `impl From<{Self}> for fusion::ToolError`)",
    label = "neither `std::error::Error` nor `Into<fusion::ToolError>`"
)]
pub trait ErrorValue: std::error::Error + 'static {}
impl<E: std::error::Error + 'static> ErrorValue for E {}

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
impl<E> InternalKind for &ErrOf<'_, E> {
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

/// Renders the success value of an action with `#[action(output_schema)]`: the value as
/// `structuredContent`, and the same JSON, compact, as the text block (MCP specification
/// 2025-06-18, "Tools", "Structured Content": a tool with an output schema must return
/// structured content, and should return its serialized JSON as text too). Generated code:
/// `render_structured(value)`.
///
/// The text is serialized from the same `serde_json::Value`, so the two agree byte for byte
/// (object keys in `Value`'s order: sorted, unless serde_json's `preserve_order` feature is
/// on). A value that is not a JSON object gets the text only: MCP requires `structuredContent`
/// to be an object, and such a value's schema is no object schema either, so servers advertise
/// no output schema for it. A value that cannot be serialized becomes `INTERNAL_ERROR`, as in
/// [`JsonTag`].
pub fn render_structured<T: Serialize>(value: T) -> ToolResponse {
    let value = match ::serde_json::to_value(&value) {
        Ok(value) => value,
        Err(error) => return ToolResponse::error(ToolError::from_internal(&error)),
    };
    // Serializing a `Value` cannot fail: its map keys are strings.
    let text = value.to_string();
    let response = ToolResponse::text(text);
    if value.is_object() {
        response.with_structured_content(value)
    } else {
        response
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

    #[derive(Serialize, ::schemars::JsonSchema)]
    struct Total {
        currency: &'static str,
        amount: u64,
        note: Option<&'static str>,
    }

    #[test]
    fn structured_success_carries_the_value_and_the_same_json_as_text() {
        let response = render_structured(Total {
            currency: "EUR",
            amount: 1200,
            note: None,
        });
        let result = rmcp::model::CallToolResult::from(response);
        let expected = serde_json::json!({"currency": "EUR", "amount": 1200, "note": null});
        assert_eq!(result.structured_content.as_ref(), Some(&expected));
        assert_eq!(result.is_error, Some(false));
        let [text] = result.content.as_slice() else {
            panic!("one block: {result:?}")
        };
        let text = &text.as_text().expect("a text block").text;
        assert_eq!(*text, expected.to_string());
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(text).unwrap(),
            expected
        );
    }

    #[test]
    fn structured_content_is_only_for_objects() {
        for response in [render_structured(vec![1, 2]), render_structured("text")] {
            let result = rmcp::model::CallToolResult::from(response);
            assert_eq!(result.structured_content, None);
            assert_eq!(result.is_error, Some(false));
        }
        assert_eq!(render_structured(vec![1, 2]).payload(), Some("[1,2]"));
        assert_eq!(render_structured("a\"b").payload(), Some(r#""a\"b""#));
    }

    #[test]
    fn an_unserializable_structured_value_is_internal() {
        let keys = std::collections::BTreeMap::from([((1, 2), "x")]);
        let response = render_structured(keys);
        assert_eq!(
            response.tool_error().map(|e| e.code().clone()),
            Some(ErrorCode::InternalError)
        );
        assert!(
            rmcp::model::CallToolResult::from(response)
                .structured_content
                .is_none()
        );
    }

    #[test]
    fn output_schemas_describe_the_serialized_form() {
        let schema = output_schema_for::<Total>();
        assert_eq!(schema["type"], "object");
        // Serialize contract: `note` is always written (as `null` when unset), so required.
        assert_eq!(
            schema["required"],
            serde_json::json!(["currency", "amount", "note"])
        );
        assert_eq!(output_schema_for::<Vec<u8>>()["type"], "array");
        // `serde_json::Value` accepts anything: the boolean schema `true`, no object schema.
        assert!(
            output_schema_for::<serde_json::Value>()
                .get("type")
                .is_none()
        );
    }

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
#[diagnostic::on_unimplemented(
    message = "`{Self}` is read as a `Result` because its name ends in `Result`, but it is not one",
    label = "an action's return type named `…Result` must be `Result<T, E>` or an alias of it",
    note = "rename the type, or return it inside `Result<{Self}, E>`"
)]
pub trait ResultParts {
    /// The success type `T`.
    type Ok;
    /// The error type `E`.
    type Err;
    /// The value itself.
    fn into_result(self) -> ::core::result::Result<Self::Ok, Self::Err>;
}
impl<T, E> ResultParts for ::core::result::Result<T, E> {
    type Ok = T;
    type Err = E;
    fn into_result(self) -> ::core::result::Result<T, E> {
        self
    }
}

/// An action's return value as the `Result` it is, through [`ResultParts`]: generated code
/// matches on it, so a type that only looks like a `Result` gets the [`ResultParts`] message
/// rather than a type mismatch. Generated code: `into_result(value)`.
pub fn into_result<R: ResultParts>(value: R) -> ::core::result::Result<R::Ok, R::Err> {
    value.into_result()
}

/// The guards of action `index` for this call (SPEC section 4), between validation and the
/// handler. Generated code: `let guarded = guarded(&context, runtime, index);` then
/// [`run_sync`] or [`run_async`], so the handler may take the context by value.
///
/// Inlined, with the common case first: a call whose context carries no guards (every call of
/// a tool called directly, and of a server without guards) is open at once, without looking up
/// the action's name or calling into the guard module.
#[inline]
pub fn guarded(
    context: &RequestContext,
    runtime: &ToolRuntime,
    index: usize,
) -> crate::guard::Guarded {
    if context.has_guards() {
        context.guarded(runtime.router().action_name(index))
    } else {
        crate::guard::Guarded::open()
    }
}

/// A generated `Tool::call`: packs the arguments and context into a [`CallFuture`] that runs
/// `tool.start(..)` (the generated [`StartCall`]) at its first poll. Nothing runs, and nothing
/// is allocated, before that.
pub fn defer<'a>(
    tool: &'a dyn StartCall,
    arguments: ::serde_json::Map<::std::string::String, ::serde_json::Value>,
    context: RequestContext,
) -> CallFuture<'a> {
    CallFuture::deferred(tool, arguments, context)
}

/// The body of a generated `StartCall::start` (run at the first poll of the call's
/// `CallFuture`): `start` routes, validates and either answers at once or returns the future
/// that waits. Runs it now; a panic in it becomes an `INTERNAL_ERROR` response (logged with
/// its error id), so polling a call never panics.
pub fn call_now<'a>(call: impl FnOnce() -> Started<'a>) -> Started<'a> {
    match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(call)) {
        Ok(future) => future,
        Err(payload) => Started::Ready(crate::dispatch::panic_response(payload)),
    }
}

/// A synchronous action's `handler` (it runs the action and renders its outcome) behind the
/// call's guards. Without guards it runs now, inside [`call_now`], and nothing is allocated;
/// with guards the future that waits for them is boxed, panics in it caught.
pub fn run_sync<'a>(
    guarded: crate::guard::Guarded,
    handler: impl FnOnce() -> ToolResponse + Send + 'a,
) -> Started<'a> {
    if guarded.is_open() {
        Started::Ready(handler())
    } else {
        run_sync_guarded(guarded, Box::new(handler))
    }
}

/// The guarded side of [`run_sync`], compiled once: its future, the guard shell and the
/// panic guard are not instantiated again for every action (the handler is boxed, one more
/// allocation on a path that allocates its admission anyway).
fn run_sync_guarded<'a>(
    guarded: crate::guard::Guarded,
    handler: Box<dyn FnOnce() -> ToolResponse + Send + 'a>,
) -> Started<'a> {
    Started::Pending(Box::pin(catch_panics_of(move || {
        guarded.run(async move { handler() })
    })))
}

/// An `async` action's `handler` behind the call's guards: boxed, panics in any poll caught.
pub fn run_async<'a>(
    guarded: crate::guard::Guarded,
    handler: impl ::core::future::Future<Output = ToolResponse> + Send + 'a,
) -> Started<'a> {
    Started::Pending(Box::pin(catch_panics_of(move || guarded.run(handler))))
}

/// Every autoref-specialization trait above, for one glob import in generated code
/// (`use ::fusion::__private::autoref::*;`): method-call syntax only finds trait methods whose
/// trait is in scope.
pub mod autoref {
    pub use super::{
        ContractKind, DeclaredContracts, InternalChain, InternalDisplay, InternalKind, JsonKind,
        NoContracts, NoValidator, PlainKind, PlainResultKind, ResponseKind, ResultKind, TextKind,
        UnitKind, ViaValidator,
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
                output_schema: None,
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
