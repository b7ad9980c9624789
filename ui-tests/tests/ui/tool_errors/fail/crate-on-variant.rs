use std::fmt;

#[derive(Debug, fusion::ToolErrors)]
enum BillingError {
    #[tool_error(NOT_FOUND, crate = fusion)]
    InvoiceNotFound,
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("No invoice with that ID")
    }
}

fn main() {}
