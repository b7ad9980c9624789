//! What an action may return: [`IntoToolResponse`] turns a handler's output into the
//! [`ToolResponse`] a client receives, as axum's `IntoResponse` does for HTTP handlers.
//!
//! The trait decides, not the spelling of the return type: `Result` behind an alias
//! (`anyhow::Result<T>`, `type BillingResult<T> = Result<T, BillingError>`), a renamed import
//! or a generic output all render the same way.
//!
//! | output | renders as |
//! |---|---|
//! | `String`, `&str`, `Cow<str>` | the text, verbatim |
//! | `()` | the text `OK` |
//! | `Json<T>`, `Vec<T>`, `Option<T>`, maps, `serde_json::Value`, numbers, `bool` | compact JSON |
//! | `Result<T, E>` with `T: Serialize` | `Ok`: a string as its text, `()` as `OK`, anything else as compact JSON; `Err`: the error's envelope |
//! | `Warned<T>` | the value as above, plus each warning as a `<tool_error severity="warning">` block |
//! | `ToolResponse` | itself |
//!
//! An action's error type `E` must implement [`ToolErrors`]: `#[derive(ToolErrors)]` types,
//! [`ToolError`], `anyhow::Error`, `std::io::Error` and boxed `std::error::Error`s do. An
//! `anyhow::Error` or a boxed error that wraps a `ToolError` keeps it; any other error without
//! a contract becomes `INTERNAL_ERROR` with an error id, its cause logged and never shown to the
//! model.

use std::any::Any;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::envelope::error::ToolError;
use crate::model::definition::{ErrorContract, ToolErrors};
use crate::model::response::ToolResponse;
use crate::model::schema::generate::output_schema_for;

/// A value an action can return: it becomes the call's [`ToolResponse`].
///
/// Implement it for your own output types when none of the implementations here fits
/// (a success that is a JSON object with its own text rendering, say):
///
/// ```
/// use fusion::{IntoToolResponse, ToolResponse};
///
/// struct Report { lines: Vec<String> }
///
/// impl IntoToolResponse for Report {
///     fn into_tool_response(self) -> ToolResponse {
///         ToolResponse::text(self.lines.join("\n"))
///     }
/// }
///
/// let report = Report { lines: vec!["a".into(), "b".into()] };
/// assert_eq!(report.into_tool_response().payload(), Some("a\nb"));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an action's output",
    label = "not `fusion::IntoToolResponse`",
    note = "return `String`, `()`, `fusion::Json<T>` of a serializable `T`, `fusion::Warned<T>`, `fusion::ToolResponse`, or `Result<T, E>` with `T: serde::Serialize` and `E: fusion::ToolErrors`"
)]
pub trait IntoToolResponse {
    /// The response a client receives for this output.
    fn into_tool_response(self) -> ToolResponse;

    /// The errors this output type can carry, for the action's advertised contract: the
    /// contract of `E` for a `Result<T, E>`, none for outputs that cannot fail.
    fn error_contracts() -> Vec<ErrorContract>
    where
        Self: Sized,
    {
        Vec::new()
    }
}

/// An output whose success value has a JSON Schema, as `#[action(output_schema)]` needs: the
/// schema is advertised as the tool's `outputSchema` and the value is sent as
/// `structuredContent` (MCP specification 2025-06-18, "Tools", "Structured Content").
/// Implemented for `Json<T>`, `Vec<T>`, `Warned<T>` and `Result<T, E>` with
/// `T: Serialize + JsonSchema`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the output of an action with `output_schema`",
    label = "no structured success value",
    note = "return `fusion::Json<T>`, `fusion::Warned<T>` or `Result<T, E>`, with `T: serde::Serialize + schemars::JsonSchema`"
)]
pub trait StructuredOutput: IntoToolResponse {
    /// The success value's type, whose schema is advertised.
    type Success: Serialize + JsonSchema;

    /// The response with the success value as `structuredContent` (and, as MCP asks, the same
    /// JSON as text).
    fn into_structured_response(self) -> ToolResponse;
}

/// A success value rendered as compact JSON, like axum's `Json`: wrap your own serializable
/// types in it (`Ok(Json(invoice))` is not needed inside a `Result`, where any `Serialize`
/// value renders as JSON).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

/// A typed success with warnings riding next to it: the result stays `isError: false`, the
/// value renders as it would alone (and keeps the action's output schema), and each warning
/// follows as a `<tool_error severity="warning">` block (a deprecated parameter used, a
/// fallback applied, a result truncated).
///
/// ```
/// use fusion::{IntoToolResponse, ToolError, Warned};
///
/// let output = Warned::new(vec![1, 2, 3])
///     .warning(ToolError::new("TRUNCATED", "Only the first 3 results are shown."));
/// let response = output.into_tool_response();
/// assert!(!response.is_error());
/// assert_eq!(response.payload(), Some("[1,2,3]"));
/// assert_eq!(response.warnings().len(), 1);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Warned<T> {
    /// The success value.
    pub value: T,
    /// The warnings, in order; each is sent with severity `warning`.
    pub warnings: Vec<ToolError>,
}

impl<T> Warned<T> {
    /// `value` with no warnings yet.
    pub fn new(value: T) -> Warned<T> {
        Warned {
            value,
            warnings: Vec::new(),
        }
    }

    /// Adds a warning (its severity becomes `warning`).
    pub fn warning(mut self, warning: impl Into<ToolError>) -> Warned<T> {
        self.warnings.push(warning.into());
        self
    }
}

/// A success value as text: a string verbatim, `()` as `OK`, anything else as compact JSON (an
/// unserializable value becomes `INTERNAL_ERROR`).
fn success<T: Serialize + 'static>(value: T) -> ToolResponse {
    let any: &dyn Any = &value;
    if let Some(text) = any.downcast_ref::<String>() {
        ToolResponse::text(text.as_str())
    } else if let Some(text) = any.downcast_ref::<&'static str>() {
        ToolResponse::text(*text)
    } else if let Some(text) = any.downcast_ref::<Cow<'static, str>>() {
        ToolResponse::text(text.as_ref())
    } else if any.is::<()>() {
        ToolResponse::text("OK")
    } else {
        ToolResponse::json(&value)
    }
}

/// A success value as `structuredContent` plus the same JSON as text. A value that is not a
/// JSON object gets the text only: MCP requires `structuredContent` to be an object.
fn structured<T: Serialize>(value: T) -> ToolResponse {
    let value = match serde_json::to_value(&value) {
        Ok(value) => value,
        Err(error) => return ToolResponse::error(ToolError::from_internal(&error)),
    };
    let response = ToolResponse::json(&value);
    if value.is_object() {
        response.with_structured_content(value)
    } else {
        response
    }
}

fn with_warnings(response: ToolResponse, warnings: Vec<ToolError>) -> ToolResponse {
    warnings
        .into_iter()
        .fold(response, ToolResponse::with_warning)
}

/// Outputs each rendered by one expression of the output (each type with its generic
/// parameters in brackets).
macro_rules! outputs {
    (|$output:ident| $render:expr; $([$($generics:tt)*] $ty:ty),* $(,)?) => {$(
        impl<$($generics)*> IntoToolResponse for $ty {
            fn into_tool_response(self) -> ToolResponse {
                let $output = self;
                $render
            }
        }
    )*};
}
outputs!(|response| response; [] ToolResponse);
outputs!(|text| ToolResponse::text(text); [] String, [] &str, [] Cow<'_, str>);
outputs!(|_unit| ToolResponse::text("OK"); [] ());
outputs!(|json| ToolResponse::json(&json.0); [T: Serialize] Json<T>);
// Outputs that are JSON as they stand.
outputs!(
    |value| ToolResponse::json(&value);
    [] Value, [] bool, [] u8, [] u16, [] u32, [] u64, [] u128, [] usize, [] i8, [] i16, [] i32,
    [] i64, [] i128, [] isize, [] f32, [] f64, [T: Serialize] Vec<T>, [T: Serialize] Option<T>,
    [K: Serialize, V: Serialize, S] HashMap<K, V, S>, [K: Serialize, V: Serialize] BTreeMap<K, V>,
);

outputs!(
    |warned| with_warnings(success(warned.value), warned.warnings);
    [T: Serialize + 'static] Warned<T>,
);

/// `Result`s, each with the rendering of its `Ok` value and its generic parameters in brackets:
/// `Err` renders as the error's envelope.
macro_rules! result_outputs {
    ($($render:expr => [$($generics:tt)*] $ok:ty;)*) => {$(
        impl<$($generics)* E: ToolErrors> IntoToolResponse for Result<$ok, E> {
            fn into_tool_response(self) -> ToolResponse {
                self.map_or_else(ToolResponse::error, $render)
            }

            fn error_contracts() -> Vec<ErrorContract> {
                E::error_contracts()
            }
        }
    )*};
}
result_outputs!(
    success => [T: Serialize + 'static,] T;
    ToolResponse::into_tool_response => [] ToolResponse;
    Warned::into_tool_response => [T: Serialize + 'static,] Warned<T>;
    Json::into_tool_response => [T: Serialize,] Json<T>;
);

impl<T: Serialize + JsonSchema> StructuredOutput for Json<T> {
    type Success = T;

    fn into_structured_response(self) -> ToolResponse {
        structured(self.0)
    }
}

impl<T: Serialize + JsonSchema> StructuredOutput for Vec<T> {
    type Success = Vec<T>;

    fn into_structured_response(self) -> ToolResponse {
        structured(self)
    }
}

impl<T: Serialize + JsonSchema + 'static> StructuredOutput for Warned<T> {
    type Success = T;

    fn into_structured_response(self) -> ToolResponse {
        with_warnings(structured(self.value), self.warnings)
    }
}

impl<T: Serialize + JsonSchema + 'static, E: ToolErrors> StructuredOutput for Result<T, E> {
    type Success = T;

    fn into_structured_response(self) -> ToolResponse {
        self.map_or_else(ToolResponse::error, structured)
    }
}

impl<T: Serialize + JsonSchema + 'static, E: ToolErrors> StructuredOutput for Result<Warned<T>, E> {
    type Success = T;

    fn into_structured_response(self) -> ToolResponse {
        self.map_or_else(ToolResponse::error, Warned::into_structured_response)
    }
}

impl<T: Serialize + JsonSchema, E: ToolErrors> StructuredOutput for Result<Json<T>, E> {
    type Success = T;

    fn into_structured_response(self) -> ToolResponse {
        self.map_or_else(ToolResponse::error, |json| structured(json.0))
    }
}

// Errors without a declared contract. `ToolError` carries its own envelope; the others become
// `INTERNAL_ERROR` (unless an `anyhow::Error` or a boxed error wraps a `ToolError`), cause logged.
impl ToolErrors for ToolError {}
impl ToolErrors for anyhow::Error {}
impl ToolErrors for std::io::Error {}
impl ToolErrors for Box<dyn std::error::Error + Send + Sync> {}
impl ToolErrors for Box<dyn std::error::Error> {}

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
/// (those of `E` for `Result<T, E>`) and its output schema. Probed rather than required
/// (autoref specialization, see `model/arguments.rs`), so an `R` that is no output is
/// reported once, where the action's call is generated. Generated code:
/// `(&&Outputs::<R>::NEW).__fusion_contracts()`.
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
    fn __fusion_output_schema(&self) -> Option<serde_json::Map<String, Value>>;
}
impl<R: StructuredOutput> DeclaredOutputSchema for &Outputs<R> {
    fn __fusion_output_schema(&self) -> Option<serde_json::Map<String, Value>> {
        Some(output_schema_for::<R::Success>())
    }
}

/// `R` has none (reported elsewhere).
pub trait NoOutputSchema {
    /// None.
    fn __fusion_output_schema(&self) -> Option<serde_json::Map<String, Value>> {
        None
    }
}
impl<R> NoOutputSchema for Outputs<R> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::code::ErrorCode;

    #[derive(Serialize, JsonSchema)]
    struct Invoice {
        id: &'static str,
    }

    type Alias<T> = Result<T, ToolError>;

    #[test]
    fn success_values_render_by_what_they_are() {
        let ok = |r: ToolResponse| r.payload().unwrap().to_owned();
        assert_eq!(ok(String::from("plain").into_tool_response()), "plain");
        assert_eq!(ok("text".into_tool_response()), "text");
        assert_eq!(ok(().into_tool_response()), "OK");
        assert_eq!(ok(vec![1, 2].into_tool_response()), "[1,2]");
        assert_eq!(
            ok(Json(Invoice { id: "inv_1" }).into_tool_response()),
            r#"{"id":"inv_1"}"#
        );
        let aliased: Alias<Invoice> = Ok(Invoice { id: "inv_1" });
        assert_eq!(ok(aliased.into_tool_response()), r#"{"id":"inv_1"}"#);
        let text: anyhow::Result<String> = Ok("verbatim".into());
        assert_eq!(ok(text.into_tool_response()), "verbatim");
        let unit: Alias<()> = Ok(());
        assert_eq!(ok(unit.into_tool_response()), "OK");
        let own = ToolResponse::error(ToolError::not_found("x"));
        assert_eq!(own.clone().into_tool_response(), own);
    }

    #[test]
    fn errors_keep_their_contract_or_become_internal() {
        let err: Alias<u8> = Err(ToolError::not_found("x"));
        let response = err.into_tool_response();
        assert_eq!(response.tool_error().unwrap().code(), &ErrorCode::NotFound);
        let err: anyhow::Result<u8> = Err(anyhow::anyhow!("db password wrong"));
        let response = err.into_tool_response();
        let error = response.tool_error().unwrap();
        assert_eq!(error.code(), &ErrorCode::InternalError);
        assert!(!error.to_xml().contains("password"));
        let err: Result<u8, std::io::Error> = Err(std::io::Error::other("disk"));
        assert_eq!(
            err.into_tool_response().tool_error().unwrap().code(),
            &ErrorCode::InternalError
        );
    }

    #[test]
    fn warnings_ride_next_to_the_value() {
        let warned = Warned::new("done").warning(ToolError::new("DEPRECATED", "Use `v2`."));
        let response = Ok::<_, ToolError>(warned).into_tool_response();
        assert!(!response.is_error());
        assert_eq!(response.payload(), Some("done"));
        assert_eq!(response.warnings()[0].severity_level().as_str(), "warning");
    }

    #[test]
    fn structured_outputs_carry_the_value_and_the_same_json_as_text() {
        let response = Json(Invoice { id: "inv_1" }).into_structured_response();
        let expected = serde_json::json!({"id": "inv_1"});
        assert_eq!(response.structured_content(), Some(&expected));
        assert_eq!(response.payload(), Some(expected.to_string().as_str()));
        // Not an object: text only.
        let list: Alias<Vec<u8>> = Ok(vec![1, 2]);
        let response = list.into_structured_response();
        assert_eq!(response.structured_content(), None);
        assert_eq!(response.payload(), Some("[1,2]"));
        // An unserializable value is an internal error, not a panic.
        let keys = Json(BTreeMap::from([((1, 2), "x")]));
        let response = keys.into_structured_response();
        assert_eq!(
            response.tool_error().unwrap().code(),
            &ErrorCode::InternalError
        );
    }

    #[test]
    fn a_result_names_its_error_contract() {
        assert!(<Alias<u8> as IntoToolResponse>::error_contracts().is_empty());
        assert!(<String as IntoToolResponse>::error_contracts().is_empty());
    }

    #[derive(Serialize, JsonSchema)]
    struct Total {
        currency: &'static str,
        amount: u64,
        note: Option<&'static str>,
    }

    #[test]
    #[allow(
        clippy::needless_borrow,
        reason = "autoref specialization: the extra references pick the impl"
    )]
    fn output_schemas_describe_the_serialized_form() {
        let schema = (&&Outputs::<Json<Total>>::NEW)
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
}
