//! Prints what a language model and a client receive when a fusion tool fails: the envelope
//! text, the typed flags, and the whole MCP `CallToolResult` as JSON.
//!
//! Run: `cargo run -p examples --example envelope`

use fusion::validation::ArgumentValidator;
use fusion::{ToolError, ToolResponse};
use rmcp::model::CallToolResult;
use serde_json::json;

fn show(title: &str, response: ToolResponse) {
    println!("== {title}");
    let result = CallToolResult::from(response);
    for block in &result.content {
        if let Some(text) = block.as_text() {
            println!("{}\n", text.text);
        }
    }
    let json = serde_json::to_string_pretty(&result).expect("a CallToolResult serializes");
    println!("CallToolResult:\n{json}\n");
}

fn main() {
    show(
        "an invoice that does not exist",
        ToolError::not_found("No invoice with that ID")
            .suggest("List invoices first, then retry with a real ID")
            .actions(["billing.list_invoices"])
            .detail("requestedId", "inv_2026_9999")
            .into(),
    );
    show(
        "a rate limit",
        ToolError::rate_limited("Too many charges for this account", 30)
            .explanation("10 charges per minute per client")
            .into(),
    );
    show(
        "a deprecated parameter riding next to a result",
        ToolResponse::json(&json!({"invoices": [{"id": "inv_1", "amount": 1200}]})).with_warning(
            ToolError::deprecated("Parameter 'limit' is deprecated; use 'page_size'."),
        ),
    );
    show(
        "an error without a contract (the cause goes to the log only)",
        ToolError::from(anyhow::anyhow!(
            "connect postgres://admin:secret@db/ledger: refused"
        ))
        .into(),
    );

    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^inv_[0-9]+$"},
            "amount": {"type": "integer", "minimum": 1},
            "currency": {"enum": ["EUR", "USD"]}
        },
        "required": ["id", "amount", "currency"]
    });
    let validator = ArgumentValidator::new("billing.charge", &schema).expect("the schema compiles");
    let args = json!({"id": "invoice-7", "amount": 0, "curency": "EUR"});
    show(
        "four problems at once",
        ToolResponse::validation(validator.check(&args)),
    );
}
