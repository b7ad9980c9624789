//! `fusion-conformance`: the server the official MCP conformance suite tests
//! (`examples/conformance.rs`), as a binary that `clients/conformance/run.sh` launches by path.

#[path = "../conformance.rs"]
mod conformance;

fn main() -> anyhow::Result<()> {
    conformance::main()
}
