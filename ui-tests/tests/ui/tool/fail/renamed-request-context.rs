use fusion::RequestContext as Ctx;

struct Ledger;

#[fusion::tool]
impl Ledger {
    #[action]
    fn balance(&self, _ctx: &Ctx) {}
}

fn main() {}
