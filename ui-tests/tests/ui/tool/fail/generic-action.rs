struct Billing;

#[fusion::tool]
impl Billing {
    #[action]
    fn list<T: Default>(&self) {}
}

fn main() {}
