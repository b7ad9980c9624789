/// Pings.
#[fusion::tool(timeout = "2d")]
fn ping() -> &'static str {
    "pong"
}

fn main() {}
