#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
enum StoreError {
    #[error("cannot connect to {url}")]
    #[tool_error(internal)]
    Connect {
        #[detail]
        url: String,
    },
}

fn main() {}
