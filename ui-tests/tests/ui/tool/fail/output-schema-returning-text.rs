struct Billing;

#[fusion::tool]
impl Billing {
    /// Summarizes the invoices.
    #[action(output_schema)]
    fn summary(&self) -> String {
        "3 invoices".to_owned()
    }
}

fn main() {}
