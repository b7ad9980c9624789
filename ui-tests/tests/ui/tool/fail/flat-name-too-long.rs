struct Billing;

#[fusion::tool]
impl Billing {
    // 61 characters on its own; flat exposition serves it as `billing_<action>`: 69.
    #[action]
    fn list_every_invoice_of_every_customer_in_every_single_currency(&self) {}

    #[action]
    fn count(&self) {}
}

fn main() {}
