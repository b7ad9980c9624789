#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum BillingError {
    #[error("no invoice {id}")]
    #[tool_error(NOT_FOUND)]
    InvoiceNotFound { id: String },
}

struct Billing;

#[fusion::tool]
impl Billing {
    /// Forgets invoices.
    #[action(errors(BillingError::InvoiceNotFound, BillingError::InvoiceNotFound))]
    fn forget(&self) {}
}

fn main() {}
