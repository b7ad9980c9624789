//! `fusion-billing`: the billing example (`examples/billing.rs`) as a binary, with the same
//! command line, so that tests and MCP clients can launch it by path
//! (`target/debug/fusion-billing`).

#[path = "../billing.rs"]
mod billing;

fn main() -> anyhow::Result<()> {
    billing::main()
}
