struct NotSer;

struct Ledger;

#[fusion::tool]
impl Ledger {
    #[action]
    fn balance(&self) -> NotSer {
        NotSer
    }
}

fn main() {}
