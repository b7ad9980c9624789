pub struct Jobs;

#[fusion::tool]
impl Jobs {
    /// Works.
    #[action(timeout = 30)]
    pub fn work(&self) {}
}

fn main() {}
