pub struct Jobs;

#[fusion::tool]
impl Jobs {
    /// Works.
    #[action(rate_limit(calls = 5, per = "0s"))]
    pub fn work(&self) {}
}

fn main() {}
