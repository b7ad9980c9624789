// A lint expectation on the type applies to the type: the derive's warning items get it as an
// `allow`, so an expectation they do not fulfil raises no warning of their own (with warnings
// denied, this would not compile otherwise).
#![deny(warnings)]

#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
#[expect(non_camel_case_types, reason = "named as the upstream API names it")]
#[allow(deprecated, reason = "ALREADY_PAID stays uncategorised on purpose")]
pub enum pay_error {
    #[error("already paid")]
    #[tool_error(code = "ALREADY_PAID")]
    AlreadyPaid,
}

fn main() {
    let error: fusion::ToolError = pay_error::AlreadyPaid.into();
    assert!(error.is_uncategorised());
}
