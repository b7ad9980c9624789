struct Billing;

#[fusion::tool(crate = "fusion-rt")]
impl Billing {
    #[action]
    fn list_invoices(&self) {}
}

fn main() {}
