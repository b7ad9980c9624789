#[derive(Debug, fusion::ToolErrors)]
enum BillingError {
    #[tool_error(NOT_FOUND)]
    InvoiceNotFound,
    #[tool_error(CONFLICT, category = "validation")]
    AlreadyPaid,
}

fn main() {}
