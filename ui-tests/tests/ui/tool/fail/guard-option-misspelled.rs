pub struct Jobs;

#[fusion::tool]
impl Jobs {
    /// Works.
    #[action(time_out = "5s")]
    pub fn work(&self) {}
}

fn main() {}
