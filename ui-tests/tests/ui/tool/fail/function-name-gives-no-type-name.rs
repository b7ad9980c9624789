/// Verifies a one-time code.
#[fusion::tool]
pub fn _2fa_verify() -> u8 {
    1
}

fn main() {}
