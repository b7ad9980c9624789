use std::fmt;

#[derive(Debug, fusion::ToolErrors)]
enum BillingError {
    #[tool_error(RATE_LIMITED)]
    Throttled {
        #[retry_after]
        wait: String,
    },
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Too many calls")
    }
}

fn main() {}
