#[derive(serde::Deserialize, schemars::JsonSchema)]
struct GetInvoice {
    id: String,
}

struct Billing;

#[fusion::tool]
impl Billing {
    #[action]
    fn get_invoice(&self, args: &GetInvoice) -> String {
        args.id.clone()
    }
}

fn main() {}
