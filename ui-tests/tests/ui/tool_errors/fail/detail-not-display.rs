use std::fmt;

#[derive(Debug)]
struct Filter {
    customer: u32,
}

#[derive(Debug, fusion::ToolErrors)]
enum BillingError {
    #[tool_error(NOT_FOUND)]
    NoMatch {
        #[detail]
        filter: Filter,
    },
}

impl fmt::Display for BillingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("No invoice matches")
    }
}

fn main() {}
