//! Available actions: one, several across tools in order, bare names resolved against the
//! type-level tool, a single-function tool.

use std::fmt;

use fusion::{ToolError, ToolErrors};

use super::{Billing, Calculator, Invoices};

/// Actions: one, several across tools, bare names with the type-level `tool`, a single-function
/// tool.
#[derive(Debug, ToolErrors)]
#[tool_error(tool = Billing)]
enum Routed {
    #[tool_error(NOT_FOUND, actions(Billing::list_invoices))]
    One,
    #[tool_error(
        NOT_FOUND,
        actions(Billing::get_invoice, Invoices::search, Calculator::calculator)
    )]
    Several,
    #[tool_error(NOT_FOUND, actions(list_invoices, get_invoice))]
    Bare,
}

impl fmt::Display for Routed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("routed")
    }
}

#[test]
fn one_action() {
    let err = ToolError::from(Routed::One);
    assert_eq!(err.available_actions(), ["billing.list_invoices"]);
}

#[test]
fn several_actions_keep_their_order() {
    let err = ToolError::from(Routed::Several);
    assert_eq!(
        err.to_xml(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n\
         <message>routed</message>\n\
         <available_actions>\n\
         \x20 <action>billing.get_invoice</action>\n\
         \x20 <action>invoices</action>\n\
         \x20 <action>calculator</action>\n\
         </available_actions>\n\
         </tool_error>"
    );
}

#[test]
fn bare_actions_resolve_against_the_type_level_tool() {
    let err = ToolError::from(Routed::Bare);
    assert_eq!(
        err.available_actions(),
        ["billing.list_invoices", "billing.get_invoice"]
    );
}
