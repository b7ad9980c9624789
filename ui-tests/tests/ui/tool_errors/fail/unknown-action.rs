use std::fmt;

use fusion::__private::ActionRef;

struct Billing;

// Stand-in for `#[fusion::tool] impl Billing { fn list_invoices(..) }`: the action-reference
// constant that macro emits (swap for the real macro once it lands).
impl Billing {
    #[doc(hidden)]
    #[allow(non_upper_case_globals)]
    pub const __fusion_action_list_invoices: ActionRef = ActionRef {
        tool: "billing",
        action: "list_invoices",
        single: false,
    };
}

#[derive(Debug, fusion::ToolErrors)]
enum BillingError {
    #[tool_error(NOT_FOUND, actions(Billing::list_invoce))]
    InvoiceNotFound,
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("No invoice with that ID")
    }
}

fn main() {}
