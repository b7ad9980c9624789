//! The expansion needs nothing in scope: the derive is named by its path, with no `use` at all,
//! and generated code reaches the runtime through `::fusion::__private` only.

#[derive(Debug, fusion::ToolErrors)]
#[tool_error(severity = "error")]
enum BillingError {
    #[tool_error(
        NOT_FOUND,
        recovery = "List invoices, then retry with a real ID, not {id}"
    )]
    InvoiceNotFound {
        #[detail(key = "requestedId")]
        id: String,
    },
    #[tool_error(RATE_LIMITED)]
    Throttled(#[retry_after] std::time::Duration),
    #[tool_error(internal)]
    Database(std::io::Error),
}

impl std::fmt::Display for BillingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("billing failed")
    }
}

fn main() {
    let err = fusion::ToolError::from(BillingError::InvoiceNotFound { id: "inv_1".into() });
    assert_eq!(err.detail_value("requestedId"), Some("inv_1"));
    let _ = <BillingError as fusion::ToolErrors>::error_contracts();
    let _ = fusion::ToolError::from(BillingError::Throttled(std::time::Duration::from_secs(1)));
    let _ = fusion::ToolError::from(BillingError::Database(std::io::Error::other("x")));
}
