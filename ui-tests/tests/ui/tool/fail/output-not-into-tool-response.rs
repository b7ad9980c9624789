#[derive(serde::Serialize)]
struct Summary {
    total: u32,
}

struct Billing;

#[fusion::tool]
impl Billing {
    /// Summarizes the invoices.
    #[action]
    fn summary(&self) -> Summary {
        Summary { total: 3 }
    }
}

fn main() {}
