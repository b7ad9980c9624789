//! A success with warnings keeps its output schema: `Warned<T>` and `Result<Warned<T>, E>`
//! advertise the schema of `T`.

#![deny(warnings)]

use fusion::{Tool as _, ToolError, Warned};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Totals {
    count: u32,
}

struct Ledger;

/// The ledger.
#[fusion::tool]
impl Ledger {
    /// An estimate.
    #[action(output_schema)]
    fn estimate(&self) -> Warned<Totals> {
        Warned::new(Totals { count: 3 })
            .warning(ToolError::new("ESTIMATED", "The count is an estimate."))
    }

    /// An estimate that can fail.
    #[action(output_schema)]
    async fn checked_estimate(&self) -> Result<Warned<Totals>, ToolError> {
        Ok(self.estimate())
    }
}

fn main() {
    for action in Ledger.definition().actions {
        let schema = action.output_schema.expect("a schema");
        assert_eq!(schema["title"], "Totals", "{}", action.name);
    }
}
