#[derive(Debug)]
struct LedgerDown;

impl std::fmt::Display for LedgerDown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ledger down")
    }
}

impl std::error::Error for LedgerDown {}

/// Its name does not end in `Result`: the macro cannot tell it is one.
type Fallible<T> = Result<T, LedgerDown>;

struct Ledger;

#[fusion::tool]
impl Ledger {
    #[action]
    fn balance(&self) -> Fallible<u64> {
        Ok(3)
    }
}

fn main() {}
