#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum BillingError {
    #[error("no invoice {id}")]
    #[tool_error(NOT_FOUND)]
    InvoiceNotFound { id: String },
    #[error("paid")]
    #[tool_error(CONFLICT)]
    AlreadyPaid,
}

struct Billing;

#[fusion::tool]
impl Billing {
    /// Fetches an invoice.
    #[action(errors(BillingError::InvoiceNotFund))]
    fn get_invoice(&self) -> Result<String, BillingError> {
        Err(BillingError::AlreadyPaid)
    }
}

fn main() {}
