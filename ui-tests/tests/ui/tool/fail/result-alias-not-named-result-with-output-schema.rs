#[derive(serde::Serialize, schemars::JsonSchema)]
struct Funds {
    cents: u64,
}

/// Its name does not end in `Result`: the macro cannot tell it is one.
type Fallible<T> = Result<T, String>;

/// Ledger balance.
#[fusion::tool(output_schema)]
fn balance() -> Fallible<Funds> {
    Ok(Funds { cents: 3 })
}

fn main() {}
