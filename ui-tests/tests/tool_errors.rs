//! Behaviour of `#[derive(ToolErrors)]`: each attribute's effect on the `<tool_error>` envelope
//! (byte-exact) and on the typed flags, and the declared contracts. One test binary: the tools
//! that `actions(..)` names are here, the error types and their tests grouped by topic in
//! `tool_errors/`.

#[path = "tool_errors/envelope.rs"]
mod envelope;

#[path = "tool_errors/flags.rs"]
mod flags;

#[path = "tool_errors/recovery.rs"]
mod recovery;

#[path = "tool_errors/actions.rs"]
mod actions;

#[path = "tool_errors/details.rs"]
mod details;

#[path = "tool_errors/internal.rs"]
mod internal;

#[path = "tool_errors/defaults.rs"]
mod defaults;

#[path = "tool_errors/structs.rs"]
mod structs;

#[path = "tool_errors/contracts.rs"]
mod contracts;

#[path = "tool_errors/conversions.rs"]
mod conversions;

#[path = "tool_errors/hygiene.rs"]
mod hygiene;

#[path = "tool_errors/with_the_tool_macro.rs"]
mod with_the_tool_macro;

use fusion::ToolError;

// --- action references --------------------------------------------------------------------------
//
// Real tools: `#[fusion::tool]` emits the action-reference constants `actions(..)` names.

/// The multi-action tool `billing`.
pub struct Billing;

#[fusion::tool]
impl Billing {
    /// Lists invoices.
    #[action]
    fn list_invoices(&self) {}

    /// Fetches one invoice.
    #[action]
    fn get_invoice(&self) {}
}

/// The multi-action tool `invoices`.
pub struct Invoices;

#[fusion::tool]
impl Invoices {
    /// Searches invoices.
    #[action]
    fn search(&self) {}
}

/// A single-function tool: generates the unit struct `Calculator`.
#[fusion::tool]
fn calculator() {}

// --- shared by the tests of internal errors ---------------------------------------------------

const SECRET: &str = "postgres://billing:hunter2@10.0.0.7:5432/ledger";

/// The envelope every internal error shows, for the error id it carries.
fn internal_xml(err: &ToolError, severity: &str) -> String {
    let id = err.detail_value("errorId").expect("an error id");
    assert!(id.starts_with("err_"), "{id}");
    format!(
        "<tool_error code=\"INTERNAL_ERROR\" severity=\"{severity}\">\n\
         <message>{}</message>\n\
         <recovery>{}</recovery>\n\
         <details>\n  <detail key=\"errorId\">{id}</detail>\n</details>\n\
         </tool_error>",
        fusion::internal::MESSAGE,
        fusion::internal::RECOVERY,
    )
}
