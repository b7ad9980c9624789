struct Billing;

#[fusion::tool]
impl Billing {
    #[action(name = "list invoices")]
    fn list_invoices(&self) {}
}

fn main() {}
