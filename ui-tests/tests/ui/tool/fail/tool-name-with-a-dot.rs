struct Billing;

#[fusion::tool(name = "billing.v2")]
impl Billing {
    #[action]
    fn list_invoices(&self) {}
}

fn main() {}
