//! fusion: MCP servers whose tools fail well.
//!
//! When a tool call fails, a language model receives a structured envelope it can act on (a
//! code, a recovery instruction, the actions it may call instead, a retry delay) and client
//! code receives typed flags (category, retryable, retry-after) it can branch on without
//! reading prose.
//!
//! # The `<tool_error>` envelope
//!
//! [`ToolError`] is both the error value and its builder:
//!
//! ```
//! use fusion::ToolError;
//!
//! fn get_invoice(id: &str) -> Result<String, ToolError> {
//!     Err(ToolError::not_found("No invoice with that ID")
//!         .suggest("List invoices first, then retry with a real ID")
//!         .actions(["billing.list_invoices"])
//!         .detail("requestedId", id))
//! }
//!
//! let err = get_invoice("inv_2026_9999").unwrap_err();
//! assert_eq!(err.to_xml(), "\
//! <tool_error code=\"NOT_FOUND\" severity=\"error\">
//! <message>No invoice with that ID</message>
//! <recovery>List invoices first, then retry with a real ID</recovery>
//! <available_actions>
//!   <action>billing.list_invoices</action>
//! </available_actions>
//! <details>
//!   <detail key=\"requestedId\">inv_2026_9999</detail>
//! </details>
//! </tool_error>");
//! ```
//!
//! The rendering is byte-exact (SPEC section 1): sections in a fixed order, each only when set;
//! element text escapes `&` and `<` only (so `Must be > 0` stays readable), attribute values
//! escape all five special characters, and characters XML 1.0 forbids become U+FFFD.
//!
//! # Typed flags
//!
//! [`ToolError::flags`] gives the object client code decides retry, escalate or abort from
//! (from the kata on typed MCP errors). It travels in the result's `_meta["fusion/error"]`:
//!
//! ```
//! use fusion::ToolError;
//! use serde_json::json;
//!
//! assert_eq!(ToolError::timeout("Ledger took too long").flags(), json!({
//!     "isError": true,
//!     "errorCategory": "transient",
//!     "isRetryable": true,
//!     "code": "TIMEOUT",
//!     "severity": "error",
//! }));
//! ```
//!
//! | code | category | retryable |
//! |---|---|---|
//! | `UNAUTHORIZED`, `FORBIDDEN`, `AUTH_REQUIRED` | auth | no |
//! | `RATE_LIMITED` | rate_limit | yes |
//! | `NOT_FOUND` | not_found | no |
//! | `VALIDATION_ERROR`, `MISSING_REQUIRED_FIELD`, `MISSING_DISCRIMINATOR`, `UNKNOWN_ACTION`, `DEPRECATED`, `HANDOFF_NAMESPACE_MISMATCH` | validation | no |
//! | `TIMEOUT`, `SERVER_BUSY`, `HANDOFF_UPSTREAM_UNAVAILABLE`, `HANDOFF_CONNECTING` | transient | yes |
//! | `INTERNAL_ERROR`, `CONFLICT`, custom codes without a declared category | unknown | no |
//!
//! Both the category and retryability can be overridden per error with
//! [`ToolError::category`] and [`ToolError::retryable`].
//!
//! # Severity
//!
//! `error` and `critical` make the MCP result `isError: true`; `warning` keeps it `false`, so
//! guidance (a deprecated parameter, a fallback, a truncated result) can ride next to a
//! successful payload with [`ToolResponse::with_warning`].
//!
//! # Errors without a contract
//!
//! `anyhow::Error`, boxed `std::error::Error`s, `std::io::Error` and caught panics convert into
//! `INTERNAL_ERROR` with an error id; the cause is logged with `tracing`, never shown to the
//! model. See [`internal`].
//!
//! # Validation errors written for self-healing
//!
//! [`validation::ArgumentValidator`] checks arguments against an action's JSON Schema, serde
//! and `validator` rules, and reports every problem at once in a `<validation_error>` envelope
//! ([`ValidationError`]). See [`validation`].

mod code;
pub mod dispatch;
mod error;
pub mod internal;
mod response;
mod tool;
pub mod validation;
mod xml;

pub use code::{ErrorCategory, ErrorCode, Severity, UnknownVariant};
pub use error::ToolError;
pub use response::{FLAGS_META_KEY, ToolResponse};
pub use tool::{
    ActionDefinition, Annotations, BoxFuture, CancellationToken, ErrorContract, ProgressReporter,
    RequestContext, Tool, ToolDefinition, ToolErrors,
};
pub use validation::ValidationError;

/// Derives an error contract for a domain error type.
pub use fusion_macros::ToolErrors;
/// Declares an MCP tool. Reference: the macro issue (attributes are documented as they land).
pub use fusion_macros::tool;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
