/// Adds two numbers.
#[fusion::tool]
#[action(title = "Add")]
fn add() {}

fn main() {}
