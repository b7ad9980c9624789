//! Unit tests of the contract model and the diff: one case per row of the classification
//! table on [`DeltaClass`], the field walk, the report and the awareness scoping. The helpers
//! are here, the tests grouped by topic beside them.

mod awareness;
mod breaking;
mod cosmetic;
mod model;
mod report;
mod risky;
mod safe;
mod unlisted;

use serde_json::{Value, json};

use super::*;
use crate::envelope::code::{ErrorCategory, ErrorCode, Severity};
use crate::{ActionDefinition, Annotations, ErrorContract, ToolDefinition};

fn action(name: &str, schema: Value) -> ActionDefinition {
    ActionDefinition {
        description: format!("The {name} action."),
        input_schema: schema.as_object().expect("an object schema").clone(),
        ..ActionDefinition::named(name)
    }
}

fn tool(name: &str, actions: Vec<ActionDefinition>) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        description: format!("The {name} tool."),
        title: None,
        discriminator: Some("action".to_owned()),
        actions,
    }
}

/// The charge schema of the billing example, in schemars' shape.
fn charge_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Charge",
        "type": "object",
        "properties": {
            "invoice_id": {"type": "string", "pattern": "^inv_[0-9]{4}$", "description": "The invoice."},
            "amount_cents": {"type": "integer", "format": "uint64", "minimum": 1},
            "currency": {"$ref": "#/$defs/Currency", "description": "The currency."},
            "note": {"type": ["string", "null"]},
        },
        "required": ["invoice_id", "amount_cents", "currency"],
        "additionalProperties": false,
        "$defs": {"Currency": {"type": "string", "enum": ["EUR", "USD"]}},
    })
}

fn billing(change: impl FnOnce(&mut ToolDefinition)) -> Contract {
    let mut def = tool(
        "billing",
        vec![
            action("charge", charge_schema()),
            action(
                "list",
                json!({"type": "object", "properties": {"status": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}]}}, "$defs": {"Status": {"type": "string", "enum": ["open", "paid"]}}}),
            ),
        ],
    );
    def.actions[0].annotations = Annotations {
        read_only: Some(false),
        destructive: Some(false),
        idempotent: Some(false),
        open_world: None,
    };
    def.actions[1].annotations.read_only = Some(true);
    def.actions[0].errors = vec![ErrorContract::new(
        ErrorCode::NotFound,
        Severity::Error,
        None,
        None,
    )];
    change(&mut def);
    Contract::from_definitions([&def])
}

fn schema_of<'d>(
    def: &'d mut ToolDefinition,
    action: &str,
) -> &'d mut serde_json::Map<String, Value> {
    &mut def
        .actions
        .iter_mut()
        .find(|a| a.name == action)
        .unwrap()
        .input_schema
}

fn props<'d>(def: &'d mut ToolDefinition, action: &str) -> &'d mut serde_json::Map<String, Value> {
    schema_of(def, action)["properties"]
        .as_object_mut()
        .unwrap()
}

/// The deltas from the unchanged billing contract to the changed one, as `(class, scope, text)`.
fn deltas(change: impl FnOnce(&mut ToolDefinition)) -> Vec<(DeltaClass, String, String)> {
    let d = diff(&billing(|_| {}), &billing(change));
    d.deltas()
        .iter()
        .map(|delta| (delta.class, d.scope(delta), delta.text.clone()))
        .collect()
}

/// A change of the billing contract and the report it gives (`CLASS scope: text` lines).
type Case<'a> = (fn(&mut ToolDefinition), &'a str);

/// Asserts that each case's change gives exactly its report, one line per delta.
fn reports(cases: &[Case<'_>]) {
    for &(change, lines) in cases {
        let report = diff(&billing(|_| {}), &billing(change)).report();
        assert_eq!(report, format!("{lines}\n"));
    }
}

/// The digest a report line shows: `sha256:` and 12 hex digits.
fn short(digest: &str) -> &str {
    &digest[..7 + 12]
}
