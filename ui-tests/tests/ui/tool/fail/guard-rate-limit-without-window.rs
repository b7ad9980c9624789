pub struct Jobs;

#[fusion::tool]
impl Jobs {
    /// Works.
    #[action(rate_limit(calls = 5))]
    pub fn work(&self) {}
}

fn main() {}
