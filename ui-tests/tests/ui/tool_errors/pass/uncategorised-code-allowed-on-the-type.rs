// The derive's warning about a code without a category is silenced by `#[allow(deprecated)]`
// on the type (with warnings denied, this would not compile otherwise).
#![deny(warnings)]

#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
#[allow(deprecated, reason = "ALREADY_PAID stays uncategorised on purpose")]
pub enum PayError {
    #[error("already paid")]
    #[tool_error(code = "ALREADY_PAID")]
    AlreadyPaid,
}

fn main() {
    let error: fusion::ToolError = PayError::AlreadyPaid.into();
    assert!(error.is_uncategorised());
}
