#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Customer {
    id: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Page {
    size: u32,
}

struct Billing;

#[fusion::tool]
impl Billing {
    #[action]
    fn list_invoices(&self, customer: Customer, page: Page) -> String {
        format!("{} {}", customer.id, page.size)
    }
}

fn main() {}
