pub struct Jobs;

fn tenant(_: &fusion::guard::GuardRequest<'_>) -> String {
    String::new()
}

#[fusion::tool]
impl Jobs {
    /// Works.
    #[action(rate_limit(calls = 5, per = "1m", global, key = tenant))]
    pub fn work(&self) {}
}

fn main() {}
