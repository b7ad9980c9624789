//! fusion: MCP servers whose tools fail well.
//!
//! When a tool call fails, a language model receives a structured envelope it can act on (a
//! code, a recovery instruction, the actions it may call instead, a retry delay) and client
//! code receives typed flags (category, retryable, retry-after) it can branch on without
//! reading prose.
//!
//! # A tool in full
//!
//! A billing tool with two actions and an error contract. `#[fusion::tool]` generates the
//! [`Tool`] implementation (definition, input schema, routing on the `action` discriminator,
//! validation); `#[derive(ToolErrors)]` turns the error enum into envelopes.
//!
//! ```
//! use fusion::{RequestContext, ToolErrors, ToolExt};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//!
//! pub struct Billing;
//!
//! #[derive(Deserialize, JsonSchema, validator::Validate)]
//! pub struct GetInvoice {
//!     /// The invoice ID, like `inv_2026_0001`.
//!     #[validate(length(min = 5))]
//!     pub id: String,
//! }
//!
//! #[derive(Serialize)]
//! pub struct Invoice {
//!     pub id: String,
//!     pub amount_cents: u64,
//! }
//!
//! #[derive(Debug, ToolErrors)]
//! #[tool_error(tool = Billing)]
//! pub enum BillingError {
//!     #[tool_error(
//!         NOT_FOUND,
//!         recovery = "List invoices first, then retry with a real ID",
//!         actions(list_invoices)
//!     )]
//!     InvoiceNotFound {
//!         #[detail(key = "requestedId")]
//!         id: String,
//!     },
//! }
//!
//! impl std::fmt::Display for BillingError {
//!     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!         match self {
//!             BillingError::InvoiceNotFound { .. } => f.write_str("No invoice with that ID"),
//!         }
//!     }
//! }
//!
//! /// Invoices of the billing system.
//! #[fusion::tool]
//! impl Billing {
//!     /// Lists invoice IDs, newest first.
//!     #[action(read_only)]
//!     pub fn list_invoices(&self) -> Vec<String> {
//!         vec!["inv_2026_0001".into()]
//!     }
//!
//!     /// Fetches one invoice by ID.
//!     #[action(read_only, idempotent)]
//!     pub async fn get_invoice(&self, args: GetInvoice) -> Result<Invoice, BillingError> {
//!         match args.id.as_str() {
//!             "inv_2026_0001" => Ok(Invoice { id: args.id, amount_cents: 1200 }),
//!             _ => Err(BillingError::InvoiceNotFound { id: args.id }),
//!         }
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let call = |args: serde_json::Value| {
//!     Billing.call(args.as_object().unwrap().clone(), RequestContext::new())
//! };
//!
//! let found = call(json!({"action": "get_invoice", "id": "inv_2026_0001"})).await;
//! assert_eq!(found.payload(), Some(r#"{"id":"inv_2026_0001","amount_cents":1200}"#));
//!
//! let missing = call(json!({"action": "get_invoice", "id": "inv_2026_9999"})).await;
//! assert_eq!(missing.tool_error().unwrap().to_xml(), "\
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
//!
//! let invalid = call(json!({"action": "get_invoice", "id": "inv", "extra": 1})).await;
//! assert_eq!(invalid.validation_error().unwrap().to_xml(), "\
//! <validation_error action=\"billing.get_invoice\">
//! <field name=\"extra\">Unknown field. You sent: 1. Expected one of the known fields: id.</field>
//! <field name=\"id\">Too short. You sent: 'inv'. Expected at least 5 characters.</field>
//! <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
//! </validation_error>");
//!
//! let typo = call(json!({"action": "get_invoices"})).await;
//! assert_eq!(typo.tool_error().unwrap().code().as_str(), "UNKNOWN_ACTION");
//! # }
//! ```
//!
//! The sections below take the pieces one at a time.
//!
//! # How a call runs
//!
//! Every call a [`server::Server`] serves, and every call a [`testing::Tester`] makes, runs the
//! same path:
//!
//! ```text
//! name + arguments ─▶ resolved ─▶ argument limits ─▶ Tool::prepare ─▶ guards ───────────▶ handler ─▶ ToolResponse
//!                     (tool,      (size, nesting)    (validate:       (scopes, rate        (your action,
//!                      action)                        synchronous)     limits, concurrency; IntoToolResponse)
//!                                                                      then layers, timeout)
//!                                 └────────────── one panic boundary ──────────────┘
//! ```
//!
//! The name the client called and its arguments are resolved once into one value: the tool,
//! the action (by the discriminator, or the flat tool name), the arguments and the exposition.
//! Every later step reads that value (hidden actions, tasks, step-up authorization, stringified
//! JSON, result limits, the guards, the tool); none looks the action up again, and nothing is
//! kept in a process-wide table: each server compiles its own tools when it registers them.
//! [`Tool::prepare`] gets the routed call as a [`ToolCall`] and validates its arguments before
//! any guard runs, so a malformed call never takes a rate-limit or concurrency slot. It returns a
//! [`PreparedCall`]; the guards configured for the tool wrap it from outside, so a
//! hand-written [`Tool`] gets exactly the guards a generated one would. The guards admit a call
//! (scopes, rate limits, concurrency slots) and then run it (layers, timeout): a call that
//! becomes a task is admitted first, so a refused call is answered directly. A panic anywhere
//! inside the boundary becomes `INTERNAL_ERROR` with an error id, and the server keeps serving.
//! A tool called directly with [`ToolExt::call`] is routed, prepared and run inside the same
//! panic boundary, without argument limits or guards.
//!
//! In the source this path is one layer, `runtime` (`runtime/call.rs`). Below it, from the
//! ground up: the envelope (codes, `<tool_error>`, `<validation_error>`, XML, internal errors,
//! "did you mean"), [`auth`], the model of tools and answers (definitions, contexts, outputs,
//! responses, [`schema`]), [`validation`], the per-call machinery ([`guard`], [`elicit`],
//! [`trace`]) and the [`contract`]. Above it: [`portability`], [`tasks`], [`client`],
//! [`server`] and [`testing`]. Each layer imports only the ones below it.
//!
//! A synchronous action (`fn`, not `async fn`) runs inline, on the task that polls the call, at
//! the cost of an `async fn`. One that may block says so, `#[action(blocking)]`: inside a Tokio
//! runtime it runs on the runtime's blocking pool, off the async workers. A plain `fn` under a
//! timeout (its own, its tool's or one a server sets) runs there too, so that the timeout
//! answers `TIMEOUT` at the deadline while the action blocks. A pool thread cannot be killed:
//! the action runs to its end, its output discarded, with its [`RequestContext`] cancelled at
//! the deadline so it can stop early (see [`PreparedCall::sync`] and
//! [`PreparedCall::blocking`]).
//!
//! A server's and a tester's calls each run inside one `tracing` span, `tool_call`, that
//! records the tool, the action, the outcome, the error code and category, and the latency;
//! with the `opentelemetry` feature it continues the caller's W3C trace from `_meta` (see
//! [`trace`]).

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
//! The rendering is byte-exact: sections in a fixed order, each only when set;
//! element text escapes `&`, `<` and the `>` of `]]>` only (so `Must be > 0` stays readable),
//! attribute values escape all five special characters, and characters XML 1.0 forbids become
//! U+FFFD, so every envelope is well-formed XML 1.0.
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
//! | `VALIDATION_ERROR`, `MISSING_REQUIRED_FIELD`, `MISSING_DISCRIMINATOR`, `UNKNOWN_ACTION`, `DEPRECATED`, `HANDOFF_NAMESPACE_MISMATCH`, `RESULT_TRUNCATED` | validation | no |
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
//! model: verbatim, unless the server rewrites it first
//! ([`Server::redact_internal_causes`](server::Server::redact_internal_causes)). See
//! [`internal`].
//!
//! # Validation errors written for self-healing
//!
//! [`validation::ArgumentValidator`] checks arguments against an action's JSON Schema, serde
//! and `validator` rules, and reports every problem at once in a `<validation_error>` envelope
//! ([`ValidationError`]). See [`validation`].
//!
//! # Testing your tools
//!
//! [`testing::Tester`] calls your tools' actions in-process, through the path a server uses
//! (discriminator, validation, guards, handler, panics caught), so a plain `cargo test` checks
//! the contract a model will see. Assertions chain, and a failure prints the whole envelope.
//! To test over the wire as well (`tools/list`, `_meta`, JSON-RPC), connect a real rmcp client
//! with [`server::Server::serve_in_process`].
//!
//! ```
//! use fusion::testing::Tester;
//! use fusion::{ErrorCategory, Severity, ToolError};
//! use serde_json::json;
//!
//! pub struct Billing;
//!
//! /// Invoices.
//! #[fusion::tool]
//! impl Billing {
//!     /// Lists invoice IDs.
//!     #[action(read_only)]
//!     pub fn list_invoices(&self) -> Vec<String> {
//!         vec!["inv_0001".into()]
//!     }
//!
//!     /// Fails: no invoice exists but the first.
//!     #[action(read_only)]
//!     pub fn get_invoice(&self) -> Result<String, ToolError> {
//!         Err(ToolError::not_found("No invoice with that ID")
//!             .suggest("List invoices first")
//!             .actions(["billing.list_invoices"]))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let tester = Tester::new().tool(Billing);
//! tester
//!     .call("billing.list_invoices", json!({}))
//!     .await
//!     .assert_json_eq(json!(["inv_0001"]));
//! tester
//!     .call("billing_get_invoice", json!({}))
//!     .await
//!     .assert_error("NOT_FOUND")
//!     .assert_severity(Severity::Error)
//!     .assert_category(ErrorCategory::NotFound)
//!     .assert_retryable(false)
//!     .assert_recovery_contains("List invoices")
//!     // Called by its flat name: available actions are named as a flat server names them.
//!     .assert_actions(["billing_list_invoices"]);
//! tester
//!     .call("billing", json!({"action": "list_invoices", "extra": 1}))
//!     .await
//!     .assert_validation_fields(["extra"]);
//! # }
//! ```
//!
//! [`testing::Outcome::snapshot`] renders a result as stable text (the envelopes, then the
//! flags in a fixed order; error ids as `[error id]`) for snapshot tests. With `insta`:
//!
//! ```ignore
//! let outcome = tester.call("billing.get_invoice", json!({"id": "inv_2026"})).await;
//! insta::assert_snapshot!(outcome.snapshot());
//! ```
//!
//! which keeps, in `tests/snapshots/`, exactly what a model would read:
//!
//! ```text
//! <tool_error code="NOT_FOUND" severity="error">
//! <message>No invoice with that ID</message>
//! <recovery>List invoices first, then retry with a real ID</recovery>
//! <available_actions>
//!   <action>billing.list_invoices</action>
//! </available_actions>
//! <details>
//!   <detail key="requestedId">inv_2026</detail>
//! </details>
//! </tool_error>
//!
//! flags: {
//!   "isError": true,
//!   "errorCategory": "not_found",
//!   "isRetryable": false,
//!   "code": "NOT_FOUND",
//!   "severity": "error"
//! }
//! ```
//!
//! ([`billing_contract.rs`](https://github.com/fusion-mcp/fusion/blob/main/examples/tests/billing_contract.rs)
//! runs this snapshot; fusion itself does not depend on `insta`.)

// On docs.rs (`--cfg docsrs`, nightly rustdoc) each feature-gated item says which feature it
// needs; `doc_cfg` reads the `#[cfg(feature = ..)]` already on the item.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The layers, from the ground up: each module imports only those above it in this list
// (`scripts/module_cycles.py --edges fusion/src` prints the imports).
//
// The envelope: codes, `<tool_error>` and `<validation_error>`, XML, internal errors, did-you-mean.
mod envelope;
// Who calls: principals, bearer tokens, resource metadata.
pub mod auth;
// Tools, actions and answers: definitions, contexts, outputs, responses, schemas.
mod model;
// Arguments checked against an action's schema and rules.
pub mod validation;
// The per-call machinery: guards, asking the user, trace context.
pub mod elicit;
pub mod guard;
pub mod trace;
// The contract lockfile and its comparison with a baseline.
pub mod contract;
// One call, whatever the transport: dispatch to an action, the call path, the `Tool` trait,
// and the registry of tools whose front half a server and a tester share.
mod runtime;
// On top: portable schemas;
pub mod portability;
// the stores of tasks (in memory, in Redis);
pub mod tasks;
// calling tools;
pub mod client;
// serving them, and testing them as a server would.
pub mod server;
pub mod testing;

pub use envelope::code::{ErrorCategory, ErrorCode, Severity, UnknownVariant};
pub use envelope::error::ToolError;
pub use envelope::internal;
pub use envelope::validation_error::ValidationError;
pub use model::context::{
    BoxFuture, CancellationToken, Elicited, Elicitor, LogLevel, LogSink, ProgressReporter,
    RequestContext, RootsLister, Sampler,
};
pub use model::definition::{
    ActionDefinition, Annotations, ErrorContract, ToolDefinition, ToolErrors,
};
pub use model::output::{IntoToolResponse, Json, StructuredOutput, Warned};
pub use model::response::{DECODED_META_KEY, FLAGS_META_KEY, ToolResponse};
pub use model::result_fit::{Paging, ResultFit, ResultLimit};
pub use model::schema;
pub use runtime::call::ToolExt;
pub use runtime::tool::{PreparedCall, Tool, ToolCall};

#[doc = include_str!("docs/tool_errors.md")]
pub use fusion_macros::ToolErrors;
#[doc = include_str!("docs/tool.md")]
pub use fusion_macros::tool;

// rustdoc does not run the examples in docs attached to re-exports; these run them.
#[cfg(doctest)]
#[doc = include_str!("docs/tool.md")]
mod tool_reference {}
#[cfg(doctest)]
#[doc = include_str!("docs/tool_errors.md")]
mod tool_errors_reference {}
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
