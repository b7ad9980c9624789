//! The client half of the error contract: read envelopes back, decide retry,
//! escalate or abort from the typed flags, and call tools by `tool.action` over rmcp.
//!
//! The server states the facts; the client decides. Never from prose: the retry policy reads
//! [`Flags`] only, never a message or the `explanation`.
//!
//! - [`parse_envelope`] reads a `<tool_error>` or `<validation_error>` (fusion's, or the older
//!   layouts other servers write) into an [`Envelope`]. Always available.
//! - [`Flags`] are the typed flags of `_meta["fusion/error"]`, or derived from an envelope.
//! - [`RetryPolicy`] decides: transient → backoff with jitter, rate_limit → wait exactly
//!   `retryAfterSeconds`, auth → escalate, validation / not_found / unknown → abort.
//! - [`connect`] (feature `client`) opens an rmcp client connection with the lifecycle of its
//!   protocol version: `server/discover` and per-request `_meta` from MCP 2026-07-28 on.
//! - [`Client`] (feature `client`, on by default) calls tools over any rmcp client transport
//!   and applies the policy; [`Client::call_batch`] keeps every sibling's result. It speaks
//!   MCP 2026-07-28: questions of `input_required` go to the application
//!   ([`Client::with_input_handler`], [`CallError::InputRequired`], [`Client::resume`]), and a
//!   call the server runs as a task is followed to its end ([`Client::with_tasks`]).
//!
//! See the [reference page](crate::client::reference) for a walk-through.

#[cfg(feature = "client")]
mod call;
#[cfg(feature = "client")]
mod connect;
mod envelope;
#[cfg(feature = "client")]
mod error;
#[cfg(feature = "client")]
mod headers;
mod parse;
mod retry;
#[cfg(feature = "client")]
mod rounds;
#[cfg(feature = "client")]
mod task;

pub use crate::envelope::flags::Flags;
#[cfg(feature = "client")]
pub use call::{CallOutput, Client, read_result};
#[cfg(feature = "client")]
pub use connect::connect;
pub use envelope::Envelope;
#[cfg(feature = "client")]
pub use error::{CallError, InputRequired, ToolFailure};
pub use parse::{ParseError, ParseErrorKind, parse_envelope};
pub use retry::{AbortReason, Decision, RetryEvent, RetryPolicy};

#[doc = include_str!("../docs/client.md")]
pub mod reference {}
