#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum PayError {
    // `transparent` passes the wrapped error through: nothing of its own.
    #[error(transparent)]
    #[tool_error(transparent, code = "PAY")]
    Unconfirmed(#[from] fusion::elicit::Unconfirmed),
    #[error("two")]
    #[tool_error(transparent)]
    Two(fusion::elicit::Unconfirmed, String),
}

fn main() {}
