struct Billing;

#[fusion::tool(nme = "billing")]
impl Billing {
    #[action]
    fn list_invoices(&self) {}
}

fn main() {}
