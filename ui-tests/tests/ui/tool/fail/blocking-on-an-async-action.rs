struct Reports;

#[fusion::tool]
impl Reports {
    /// Exports the reports.
    #[action(blocking)]
    async fn export(&self) -> String {
        String::new()
    }
}

fn main() {}
