#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum BillingError {
    #[error("no invoice {id}")]
    #[tool_error(NOT_FOUND)]
    InvoiceNotFound { id: String },
}

struct Billing;

#[fusion::tool]
impl Billing {
    /// Lists invoices.
    #[action(errors(BillingError::InvoiceNotFound))]
    fn list_invoices(&self) -> Vec<String> {
        Vec::new()
    }
}

fn main() {}
