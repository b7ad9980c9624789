struct Billing;

#[fusion::tool]
impl Billing {
    #[action]
    fn list(&self) {}

    #[action(name = "list")]
    fn list_all(&self) {}
}

fn main() {}
