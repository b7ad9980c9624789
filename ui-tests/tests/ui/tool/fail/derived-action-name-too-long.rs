struct Billing;

#[fusion::tool]
impl Billing {
    // The action name is the method name: 65 characters.
    #[action]
    fn list_every_invoice_of_every_customer_in_every_currency_since_2001(&self) {}
}

fn main() {}
