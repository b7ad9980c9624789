use std::fmt;

#[derive(Debug, fusion::ToolErrors)]
enum BillingError {
    #[tool_error(NOT_FOUND)]
    InvoiceNotFound,
    AlreadyPaid,
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("billing failed")
    }
}

fn main() {}
