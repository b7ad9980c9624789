//! `output_schema`: the success type's schema in the definition, successes carrying it as
//! structured content with the same JSON as text, errors carrying none.

use fusion::{Json, Tool, ToolError, Warned};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{call, envelope, payload};

// --- the tools ------------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct Lookup {
    id: String,
}

/// An invoice as the model receives it.
#[derive(Serialize, JsonSchema)]
struct Invoice {
    id: String,
    amount_cents: u64,
    /// Set once paid.
    paid_at: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct Totals {
    count: u32,
}

struct Ledger;

/// Invoices, with typed results.
#[fusion::tool]
impl Ledger {
    /// Fetches one invoice.
    #[action(read_only, output_schema)]
    async fn get(&self, args: Lookup) -> Result<Invoice, ToolError> {
        match args.id.as_str() {
            "inv_1" => Ok(Invoice {
                id: args.id,
                amount_cents: 1200,
                paid_at: None,
            }),
            _ => {
                Err(ToolError::not_found("No invoice with that ID").detail("requestedId", args.id))
            }
        }
    }

    /// Totals, through `anyhow::Result`.
    #[action(output_schema)]
    fn totals(&self) -> anyhow::Result<Totals> {
        Ok(Totals { count: 1 })
    }

    /// A plain return value.
    #[action(output_schema)]
    fn latest(&self) -> Json<Totals> {
        Json(Totals { count: 2 })
    }

    /// A success with a warning next to it.
    #[action(output_schema)]
    fn estimated(&self) -> Warned<Totals> {
        Warned::new(Totals { count: 6 })
            .warning(ToolError::new("ESTIMATED", "The count is an estimate."))
    }

    /// The same, fallible.
    #[action(output_schema)]
    fn estimated_or_not(&self) -> Result<Warned<Totals>, ToolError> {
        Ok(Warned::new(Totals { count: 7 })
            .warning(ToolError::new("ESTIMATED", "The count is an estimate.")))
    }

    /// Fails without a contract.
    #[action(output_schema)]
    fn broken(&self) -> anyhow::Result<Totals> {
        Err(anyhow::anyhow!("ledger offline"))
    }

    /// No output schema: rendered as before.
    #[action]
    fn plain(&self) -> Json<Totals> {
        Json(Totals { count: 3 })
    }
}

/// Counts invoices.
#[fusion::tool(output_schema)]
fn count_invoices() -> Json<Totals> {
    Json(Totals { count: 4 })
}

/// Counts paid invoices.
#[fusion::tool]
#[action(read_only, output_schema)]
fn count_paid() -> Result<Totals, ToolError> {
    Ok(Totals { count: 5 })
}

/// The output schema of `Totals`.
fn totals_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Totals",
        "type": "object",
        "properties": {"count": {"type": "integer", "format": "uint32", "minimum": 0}},
        "required": ["count"],
    })
}

// --- definitions ----------------------------------------------------------------------------

#[test]
fn the_definition_carries_the_success_types_schema() {
    let definition = Ledger.definition();
    let schemas: Vec<(&str, Option<Value>)> = definition
        .actions
        .iter()
        .map(|a| (a.name.as_str(), a.output_schema.clone().map(Value::Object)))
        .collect();
    assert_eq!(
        schemas,
        [
            (
                "get",
                Some(json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "title": "Invoice",
                    "description": "An invoice as the model receives it.",
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "amount_cents": {"type": "integer", "format": "uint64", "minimum": 0},
                        "paid_at": {"description": "Set once paid.", "type": ["string", "null"]},
                    },
                    // The serialize contract: `paid_at` is always written, so required.
                    "required": ["id", "amount_cents", "paid_at"],
                }))
            ),
            ("totals", Some(totals_schema())),
            ("latest", Some(totals_schema())),
            ("estimated", Some(totals_schema())),
            ("estimated_or_not", Some(totals_schema())),
            ("broken", Some(totals_schema())),
            ("plain", None),
        ]
    );
}

#[test]
fn a_function_tool_declares_it_on_the_tool_or_on_its_action() {
    for definition in [CountInvoices.definition(), CountPaid.definition()] {
        let schema = definition.actions[0].output_schema.clone();
        assert_eq!(schema.map(Value::Object), Some(totals_schema()));
    }
}

// --- calls ----------------------------------------------------------------------------------

/// The structured content of a success, after checking the text block is the same JSON.
fn structured(response: &fusion::ToolResponse) -> Value {
    let text = payload(response);
    let value = response
        .structured_content()
        .cloned()
        .unwrap_or_else(|| panic!("no structured content: {response:?}"));
    assert_eq!(text, value.to_string());
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), value);
    assert_eq!(response.content_texts().len(), 1);
    value
}

#[tokio::test]
async fn a_success_carries_the_value_and_the_same_json_as_text() {
    let got = call(Ledger, json!({"action": "get", "id": "inv_1"})).await;
    assert_eq!(
        structured(&got),
        json!({"id": "inv_1", "amount_cents": 1200, "paid_at": null})
    );
    for (action, count) in [("totals", 1), ("latest", 2)] {
        let response = call(Ledger, json!({ "action": action })).await;
        assert_eq!(structured(&response), json!({ "count": count }), "{action}");
    }
    assert_eq!(
        structured(&call(CountInvoices, json!({})).await),
        json!({"count": 4})
    );
    assert_eq!(
        structured(&call(CountPaid, json!({})).await),
        json!({"count": 5})
    );
}

#[tokio::test]
async fn a_warned_success_carries_the_value_and_its_warnings() {
    for (action, count) in [("estimated", 6), ("estimated_or_not", 7)] {
        let response = call(Ledger, json!({ "action": action })).await;
        assert!(!response.is_error(), "{action}");
        let value = json!({ "count": count });
        assert_eq!(response.structured_content(), Some(&value), "{action}");
        assert_eq!(
            response.content_texts(),
            [
                value.to_string(),
                "<tool_error code=\"ESTIMATED\" severity=\"warning\">
<message>The count is an estimate.</message>
</tool_error>"
                    .to_owned()
            ],
            "{action}"
        );
    }
}

#[tokio::test]
async fn without_the_flag_a_success_is_text_only() {
    let response = call(Ledger, json!({"action": "plain"})).await;
    assert_eq!(payload(&response), r#"{"count":3}"#);
    assert_eq!(response.structured_content(), None);
}

#[tokio::test]
async fn errors_carry_no_structured_content() {
    let missing = call(Ledger, json!({"action": "get", "id": "inv_9"})).await;
    assert!(envelope(&missing).starts_with("<tool_error code=\"NOT_FOUND\""));
    assert_eq!(missing.structured_content(), None);

    let broken = call(Ledger, json!({"action": "broken"})).await;
    assert!(envelope(&broken).starts_with("<tool_error code=\"INTERNAL_ERROR\""));
    assert_eq!(broken.structured_content(), None);

    let invalid = call(Ledger, json!({"action": "get", "id": 7})).await;
    assert!(envelope(&invalid).starts_with("<validation_error"));
    assert_eq!(invalid.structured_content(), None);

    let routing = call(Ledger, json!({"action": "gte"})).await;
    assert!(envelope(&routing).starts_with("<tool_error code=\"UNKNOWN_ACTION\""));
    assert_eq!(routing.structured_content(), None);
}
