use std::fmt;

#[derive(Debug, fusion::ToolErrors)]
enum BillingError {
    #[tool_error(CONFLICT, severity = "fatal")]
    AlreadyPaid,
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Invoice is already paid")
    }
}

fn main() {}
