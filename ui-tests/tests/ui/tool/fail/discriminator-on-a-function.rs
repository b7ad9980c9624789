#[fusion::tool(discriminator = "op")]
fn ping() -> &'static str {
    "pong"
}

fn main() {}
