//! The billing example's `tools/list`, grouped and flat, is accepted by the tool APIs of
//! Anthropic, OpenAI and Gemini: no `$ref`/`$defs`, no `oneOf`/`allOf`/`const`, no keyword or
//! `format` Gemini lacks, names every provider takes.

#[path = "../billing.rs"]
#[allow(
    dead_code,
    reason = "only the tools are used here, not the command line"
)]
mod billing;

use billing::{Billing, Ledger};
use fusion::portability::Provider;
use fusion::server::{Exposition, Server};
use fusion::testing::assert_portable;
use serde_json::{Value, json};

/// The example's tools, served as its `server` serves them.
fn tools(exposition: Exposition) -> Vec<rmcp::model::Tool> {
    let billing = Billing::seeded();
    let ledger = Ledger::sharing(&billing);
    Server::new("fusion-billing", "0.0.0")
        .tool(billing)
        .tool(ledger)
        .exposition(exposition)
        .tool_definitions()
}

#[test]
fn every_exposition_suits_the_default_providers() {
    for exposition in [Exposition::Grouped, Exposition::Flat] {
        let tools = tools(exposition);
        assert!(!tools.is_empty());
        assert_portable(&tools, &Provider::DEFAULT);
    }
}

#[test]
fn the_advertised_schema_inlines_the_enums() {
    let tools = tools(Exposition::Grouped);
    let billing = tools.iter().find(|t| t.name == "billing").expect("billing");
    let schema = Value::Object((*billing.input_schema).clone());
    assert!(schema.get("$defs").is_none(), "{schema:#}");
    // `Option<Status>`: the unit enum in place, `null` as `nullable`.
    let status = &schema["properties"]["status"];
    assert_eq!(status["enum"], json!(["open", "paid"]), "{status:#}");
    assert_eq!(status["nullable"], true, "{status:#}");
    assert_eq!(
        schema["properties"]["currency"]["enum"],
        json!(["EUR", "USD"])
    );
}
