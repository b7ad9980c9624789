// A function tool declares its one action's variants on either attribute.
#[derive(Debug, thiserror::Error, fusion::ToolErrors)]
pub enum LookupError {
    #[error("no invoice {id}")]
    #[tool_error(NOT_FOUND)]
    NotFound { id: String },
    #[error("locked")]
    #[tool_error(CONFLICT, category = "transient")]
    Locked,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Id {
    id: String,
}

/// Fetches an invoice.
#[fusion::tool(errors(LookupError::NotFound))]
fn get_invoice(args: Id) -> Result<String, LookupError> {
    Err(LookupError::NotFound { id: args.id })
}

fn main() {
    use fusion::Tool;
    let definition = GetInvoice.definition();
    let codes: Vec<String> = definition.actions[0]
        .errors
        .iter()
        .map(|e| e.code.to_string())
        .collect();
    assert_eq!(codes, ["NOT_FOUND"]);
}
