//! A `Result` behind an alias is an action's result whatever the alias is called: its error
//! type's contracts reach the definition, with and without `output_schema`.

#![deny(warnings)]

use fusion::Tool as _;

#[derive(Debug, fusion::ToolErrors)]
enum LedgerError {
    #[tool_error(code = "LEDGER_LOCKED", category = "transient")]
    Locked,
}

impl std::fmt::Display for LedgerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the ledger is locked")
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Funds {
    cents: u64,
}

/// Not named like a `Result`.
type Fallible<T> = Result<T, LedgerError>;

struct Ledger;

/// The ledger.
#[fusion::tool]
impl Ledger {
    /// The balance.
    #[action]
    fn balance(&self) -> Fallible<u64> {
        Ok(3)
    }

    /// The funds, as structured content.
    #[action(output_schema)]
    fn funds(&self) -> Fallible<Funds> {
        Err(LedgerError::Locked)
    }
}

fn main() {
    let definition = Ledger.definition();
    let contracts = <LedgerError as fusion::ToolErrors>::error_contracts();
    assert_eq!(contracts.len(), 1);
    for action in &definition.actions {
        assert_eq!(action.errors, contracts, "{}", action.name);
    }
    assert_eq!(definition.actions[0].output_schema, None);
    let schema = definition.actions[1]
        .output_schema
        .as_ref()
        .expect("a schema");
    assert_eq!(schema["title"], "Funds");
}
