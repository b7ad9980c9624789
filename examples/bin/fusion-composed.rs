//! `fusion-composed`: the composed example (`examples/composed.rs`: a fusion tool, an rmcp
//! prompt and resources in one server) as a binary, with the same command line, so that tests
//! and MCP clients can launch it by path (`target/debug/fusion-composed`).

#[path = "../composed.rs"]
mod composed;

fn main() -> anyhow::Result<()> {
    composed::main()
}
