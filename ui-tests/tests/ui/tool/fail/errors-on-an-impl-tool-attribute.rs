#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum BillingError {
    #[error("no invoice {id}")]
    #[tool_error(NOT_FOUND)]
    InvoiceNotFound { id: String },
}

struct Billing;

// `errors(..)` belongs on each action of an `impl` block.
#[fusion::tool(errors(BillingError::InvoiceNotFound))]
impl Billing {
    /// Fetches an invoice.
    #[action]
    fn get_invoice(&self) -> Result<String, BillingError> {
        Ok("inv_1".into())
    }
}

fn main() {}
