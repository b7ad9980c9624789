#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum BillingError {
    #[error("no invoice {id}")]
    #[tool_error(NOT_FOUND)]
    InvoiceNotFound { id: String },
}

#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum LedgerError {
    #[error("locked")]
    #[tool_error(CONFLICT)]
    Locked,
}

struct Billing;

#[fusion::tool]
impl Billing {
    /// Fetches an invoice.
    #[action(errors(BillingError::InvoiceNotFound, LedgerError::Locked))]
    fn get_invoice(&self) -> Result<String, BillingError> {
        Ok("inv_1".into())
    }
}

fn main() {}
