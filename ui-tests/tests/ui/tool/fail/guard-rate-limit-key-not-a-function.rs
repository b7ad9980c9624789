pub struct Jobs;

const TENANT: &str = "acme";

#[fusion::tool]
impl Jobs {
    /// Works.
    #[action(rate_limit(calls = 5, per = "1m", key = TENANT))]
    pub fn work(&self) {}
}

fn main() {}
