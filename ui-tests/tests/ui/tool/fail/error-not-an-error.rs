struct Ledger;

#[fusion::tool]
impl Ledger {
    #[action]
    fn balance(&self) -> Result<u64, String> {
        Err("down".to_owned())
    }
}

fn main() {}
