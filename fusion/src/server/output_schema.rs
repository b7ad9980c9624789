//! The `outputSchema` a tool is advertised with (MCP specification 2025-06-18, "Tools",
//! "Output Schema"): one per MCP tool, so a grouped tool of several actions needs one schema
//! that every action's success conforms to.
//!
//! A grouped tool gets one when every action declares an object output schema: the schemas
//! themselves when they are all the same, else their merge (every property of any action, a
//! property declared differently by two actions accepting either form, required only what
//! every action requires). It gets none when an action declares no output schema (its
//! successes carry no `structuredContent`, which a tool with an output schema must send) or
//! when two actions define a `$defs` entry of one name differently.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::model::definition::{ActionDefinition, ToolDefinition};
use crate::schema;

/// The `outputSchema` of a grouped tool of `actions` (see the module docs).
pub(super) fn of_tool(actions: &[ActionDefinition]) -> Option<Arc<Map<String, Value>>> {
    let schemas: Vec<Map<String, Value>> = actions.iter().map(advertised).collect::<Option<_>>()?;
    let (first, rest) = schemas.split_first()?;
    if rest.iter().all(|schema| schema == first) {
        return Some(Arc::new(first.clone()));
    }
    merge(&schemas).map(Arc::new)
}

/// Logs a warning, once per registered tool, for each action whose declared output schema is
/// not an object schema (it is advertised without one), and when every action of a grouped
/// tool declares an object output schema but their `$defs` disagree (the tool is advertised
/// without one in grouped exposition).
pub(super) fn warn(def: &ToolDefinition) {
    for action in &def.actions {
        if let Some(schema) = &action.output_schema
            && !is_object_schema(schema)
        {
            tracing::warn!(
                target: "fusion::server",
                tool = def.name.as_str(),
                action = action.name.as_str(),
                "the output schema is not an object schema (MCP requires `\"type\": \"object\"`); \
                 the action is advertised without `outputSchema`; return a struct to declare one"
            );
        }
    }
    let declared = def.actions.len() > 1 && def.actions.iter().all(|a| advertised(a).is_some());
    if declared && of_tool(&def.actions).is_none() {
        tracing::warn!(
            target: "fusion::server",
            tool = def.name.as_str(),
            "every action declares an output schema, but two of them define a `$defs` type of \
             one name differently; in grouped exposition the tool is advertised without \
             `outputSchema`: rename one type (`#[schemars(rename = \"...\")]`) or serve the \
             tool in flat exposition"
        );
    }
}

/// MCP requires an output schema whose top-level `type` is `"object"` (MCP specification
/// 2025-06-18, "Tools": `outputSchema` is `{type: "object", properties?, required?}`; the
/// TypeScript SDK rejects a tool list with any other).
fn is_object_schema(schema: &Map<String, Value>) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

fn advertised(action: &ActionDefinition) -> Option<Map<String, Value>> {
    let schema = action.output_schema.as_ref()?;
    is_object_schema(schema).then(|| schema::advertised(schema))
}

/// One object schema every document of `schemas` conforms to; `None` when their `$defs`
/// disagree.
fn merge(schemas: &[Map<String, Value>]) -> Option<Map<String, Value>> {
    let mut properties: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut defs = Map::new();
    for schema in schemas {
        for (name, property) in object(schema, "properties") {
            let forms = properties.entry(name.clone()).or_default();
            if !forms.contains(property) {
                forms.push(property.clone());
            }
        }
        for (name, def) in object(schema, "$defs") {
            match defs.get(name) {
                Some(known) if known != def => return None,
                _ => {
                    defs.insert(name.clone(), def.clone());
                }
            }
        }
    }
    let required: Vec<Value> = schema::required(&schemas[0])
        .into_iter()
        .filter(|name| schemas.iter().all(|s| schema::required(s).contains(name)))
        .map(Value::from)
        .collect();
    let closed = schemas
        .iter()
        .all(|s| s.get("additionalProperties") == Some(&Value::Bool(false)));

    let mut merged = Map::new();
    merged.insert("type".into(), "object".into());
    let properties = properties
        .into_iter()
        .map(|(name, mut forms)| {
            let property = match forms.len() {
                1 => forms.remove(0),
                _ => serde_json::json!({ "anyOf": forms }),
            };
            (name, property)
        })
        .collect();
    merged.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        merged.insert("required".into(), Value::Array(required));
    }
    if closed {
        merged.insert("additionalProperties".into(), Value::Bool(false));
    }
    if !defs.is_empty() {
        merged.insert("$defs".into(), Value::Object(defs));
    }
    Some(merged)
}

fn object<'s>(
    schema: &'s Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = (&'s String, &'s Value)> {
    schema
        .get(key)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

#[cfg(test)]
pub(super) mod tests {
    use serde_json::json;

    use super::*;

    /// An action named `name` declaring `schema` as its output schema.
    pub(in crate::server) fn action(name: &str, schema: Option<Value>) -> ActionDefinition {
        ActionDefinition {
            output_schema: schema.map(|s| s.as_object().unwrap().clone()),
            ..ActionDefinition::named(name)
        }
    }

    fn invoice() -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Invoice",
            "type": "object",
            "properties": {"id": {"type": "string"}, "cents": {"type": "integer"}},
            "required": ["id", "cents"]
        })
    }

    #[test]
    fn actions_returning_one_type_share_its_schema() {
        let actions = [
            action("get", Some(invoice())),
            action("pay", Some(invoice())),
        ];
        let schema = of_tool(&actions).unwrap();
        assert_eq!(
            Value::Object((*schema).clone()),
            json!({
                "type": "object",
                "properties": {"id": {"type": "string"}, "cents": {"type": "integer"}},
                "required": ["id", "cents"]
            })
        );
    }

    #[test]
    fn different_outputs_merge_into_a_schema_every_success_conforms_to() {
        let receipt = json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}, "paid": {"type": "boolean"}},
            "required": ["id", "paid"],
            "additionalProperties": false
        });
        let actions = [action("get", Some(invoice())), action("pay", Some(receipt))];
        let schema = Value::Object((*of_tool(&actions).unwrap()).clone());
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "cents": {"type": "integer"},
                    "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                    "paid": {"type": "boolean"}
                },
                "required": ["id"]
            })
        );
        // Each action's own success validates against the merge.
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&json!({"id": "inv_1", "cents": 5})));
        assert!(validator.is_valid(&json!({"id": 7, "paid": true})));
    }

    #[test]
    fn no_schema_when_an_action_declares_none_or_definitions_disagree() {
        let actions = [action("get", Some(invoice())), action("list", None)];
        assert_eq!(of_tool(&actions), None);
        let with_def = |def: Value| {
            json!({
                "type": "object",
                "properties": {"status": {"$ref": "#/$defs/Status"}},
                "$defs": {"Status": def}
            })
        };
        let a = with_def(json!({"type": "string", "enum": ["open"]}));
        let b = with_def(json!({"type": "string", "enum": ["paid"]}));
        let actions = [action("get", Some(a.clone())), action("pay", Some(b))];
        assert_eq!(of_tool(&actions), None);
        let same = [action("get", Some(a.clone())), action("pay", Some(a))];
        assert!(of_tool(&same).is_some());
    }

    #[test]
    fn output_schemas_are_advertised_only_as_objects_without_dialect_or_title() {
        let object = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Invoice",
            "type": "object",
            "properties": {"id": {"type": "string"}},
        });
        let advertised = of_tool(&[action("get", Some(object))]).unwrap();
        assert_eq!(
            Value::Object((*advertised).clone()),
            json!({"type": "object", "properties": {"id": {"type": "string"}}})
        );
        for not_object in [
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": ["object", "null"]}),
            json!({"oneOf": [{"type": "object"}, {"type": "object"}]}),
            json!({}),
        ] {
            let get = action("get", Some(not_object.clone()));
            assert_eq!(of_tool(&[get]), None, "{not_object}");
        }
        assert_eq!(of_tool(&[action("get", None)]), None);
    }
}
