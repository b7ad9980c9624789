struct NotSer;

struct Ledger;

#[fusion::tool]
impl Ledger {
    #[action]
    fn balance(&self) -> Result<NotSer, fusion::ToolError> {
        Ok(NotSer)
    }
}

fn main() {}
