pub struct Jobs;

/// Jobs.
#[fusion::tool(concurrency(max_active = 0, max_queued = 10))]
impl Jobs {
    /// Works.
    #[action]
    pub fn work(&self) {}
}

fn main() {}
