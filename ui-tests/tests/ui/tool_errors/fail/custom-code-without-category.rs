// The derive warns (rustc's `deprecated` lint, denied here to show it) when a code has no
// category: a custom code, or CONFLICT, whose flags would read `unknown`.
#![deny(deprecated)]

#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum PayError {
    #[error("already paid")]
    #[tool_error(code = "ALREADY_PAID")]
    AlreadyPaid,
    #[error("changed")]
    #[tool_error(CONFLICT)]
    Changed,
    // Categorized, or deliberately unknown: no warning.
    #[error("over")]
    #[tool_error(code = "AMOUNT_OVER_BALANCE", category = "validation")]
    OverBalance,
    #[error("odd")]
    #[tool_error(code = "ODD", category = "unknown")]
    Odd,
}

fn main() {}
