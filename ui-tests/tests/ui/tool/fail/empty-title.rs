struct Billing;

#[fusion::tool]
impl Billing {
    #[action(title = "")]
    fn list(&self) {}
}

fn main() {}
