#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum StoreError {
    #[error("ledger unavailable: {0}")]
    #[tool_error(internal, recovery = "Check the database URL")]
    Database(#[from] std::io::Error),
}

fn main() {}
