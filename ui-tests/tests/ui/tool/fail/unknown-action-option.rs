struct Billing;

#[fusion::tool]
impl Billing {
    #[action(read_onyl)]
    fn list_invoices(&self) {}
}

fn main() {}
