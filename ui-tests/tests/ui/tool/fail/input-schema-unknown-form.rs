#[fusion::tool(input_schema = "verbatim")]
fn ping() -> &'static str {
    "pong"
}

fn main() {}
