struct Billing;

#[fusion::tool]
impl Billing {
    fn list_invoices(&self) {}
}

fn main() {}
