#[derive(serde::Serialize, schemars::JsonSchema)]
struct Summary {
    count: u32,
}

struct Billing;

#[fusion::tool(output_schema)]
impl Billing {
    /// Summarizes the invoices.
    #[action]
    fn summary(&self) -> Summary {
        Summary { count: 3 }
    }
}

fn main() {}
