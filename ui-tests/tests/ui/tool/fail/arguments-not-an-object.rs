struct Tags;

/// Tags.
#[fusion::tool]
impl Tags {
    /// Adds tags: a bare list is no JSON object, so no model could name its fields.
    #[action]
    fn add(&self, tags: Vec<String>) -> String {
        tags.join(",")
    }
}

/// Counts a number.
#[fusion::tool]
fn count(n: u32) -> u32 {
    n
}

fn main() {}
