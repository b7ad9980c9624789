struct Billing;

#[fusion::tool]
impl Clone for Billing {
    fn clone(&self) -> Self {
        Billing
    }
}

fn main() {}
