struct Billing;

// 65 characters: LLM APIs accept tool names of at most 64.
#[fusion::tool(name = "billing_tool_of_the_accounting_department_of_the_northern_regions")]
impl Billing {
    #[action]
    fn list(&self) {}
}

fn main() {}
