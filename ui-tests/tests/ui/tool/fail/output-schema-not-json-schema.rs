#[derive(serde::Serialize)]
struct Totals {
    count: u32,
}

/// Counts the invoices.
#[fusion::tool(output_schema)]
fn count_invoices() -> Result<Totals, fusion::ToolError> {
    Ok(Totals { count: 3 })
}

fn main() {}
