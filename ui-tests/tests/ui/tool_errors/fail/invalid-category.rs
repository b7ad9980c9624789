use std::fmt;

#[derive(Debug, fusion::ToolErrors)]
enum BillingError {
    #[tool_error(code = "LEDGER_BUSY", category = "transeint")]
    LedgerBusy,
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("The ledger is busy")
    }
}

fn main() {}
