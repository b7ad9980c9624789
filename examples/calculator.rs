//! The smallest fusion server: one function tool over stdio.
//!
//! Run: `cargo run -p examples --example calculator` (then speak MCP on stdin).

use fusion::server::Server;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

/// Adds two numbers.
#[fusion::tool]
#[action(read_only, idempotent)]
fn add(args: AddArgs) -> f64 {
    args.a + args.b
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `fusion::server_info!()` reads the name and version from this crate's Cargo.toml.
    Server::with_info(fusion::server_info!())
        .tool(Add)
        .serve_stdio()
        .await?;
    Ok(())
}
