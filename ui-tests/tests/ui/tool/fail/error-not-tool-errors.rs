#[derive(Debug)]
struct LedgerDown;

impl std::fmt::Display for LedgerDown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ledger down")
    }
}

impl std::error::Error for LedgerDown {}

struct Ledger;

#[fusion::tool]
impl Ledger {
    /// The balance.
    #[action]
    fn balance(&self) -> Result<u64, LedgerDown> {
        Err(LedgerDown)
    }
}

fn main() {}
