#[fusion::tool]
struct Billing {
    currency: String,
}

fn main() {}
