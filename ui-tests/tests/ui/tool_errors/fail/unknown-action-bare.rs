use std::fmt;

struct Billing;

#[fusion::tool]
impl Billing {
    /// Lists invoices.
    #[action]
    fn list_invoices(&self) {}

    /// Refunds an invoice.
    #[action]
    fn refund(&self) {}
}

#[derive(Debug, fusion::ToolErrors)]
#[tool_error(tool = Billing)]
enum BillingError {
    #[tool_error(NOT_FOUND, actions(list_invoices, refnd))]
    InvoiceNotFound,
    #[tool_error(CONFLICT, category = "validation", actions(cancel))]
    Conflict,
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("No invoice with that ID")
    }
}

fn main() {}
