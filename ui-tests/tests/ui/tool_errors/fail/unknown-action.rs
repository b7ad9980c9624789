use std::fmt;

struct Billing;

#[fusion::tool]
impl Billing {
    /// Lists invoices.
    #[action]
    fn list_invoices(&self) {}
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
