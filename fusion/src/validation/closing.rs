//! Closing object schemas: every object schema that says nothing about fields it does not
//! list is made to deny them, with the keyword its draft and its composition call for (see
//! `ArgumentValidator`'s docs for the rules).

use std::collections::HashSet;

use serde_json::Value;

use crate::schema::{BRANCHES, EVERY, Walk, local_pointer};

/// Keywords that apply other schemas to the same instance as the object they sit in: an
/// object schema using one is closed with `unevaluatedProperties`, which sees their fields.
const COMPOSING: [&str; 6] = ["allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas"];

/// The keywords through which the object schemas closed are reached.
const CLOSED_THROUGH: &[&str] = &[
    "properties",
    "$defs",
    "definitions",
    "items",
    "prefixItems",
    "additionalProperties",
];

/// Keywords through which a schema brings fields into the object it describes, besides
/// [`COMPOSING`].
const OWN_FIELD_SOURCES: [&str; 5] = [
    "properties",
    "patternProperties",
    "additionalProperties",
    "then",
    "else",
];

/// `schema` with unknown fields denied in every object schema that does not already say how to
/// treat them (see [`ArgumentValidator`]).
pub(crate) fn deny_unknown_fields(schema: &Value) -> Value {
    let unevaluated = knows_unevaluated(schema);
    let shared = combined_targets(schema);
    let closing: Vec<(String, &str)> = Walk::new(CLOSED_THROUGH)
        .from(schema.as_object())
        .filter_map(|node| {
            let map = node.schema;
            let says_nothing = map.contains_key("properties")
                && !map.contains_key("additionalProperties")
                && !map.contains_key("unevaluatedProperties")
                && !map.contains_key("patternProperties");
            if !says_nothing || shared.contains(&node.pointer) {
                return None;
            }
            // `additionalProperties` only sees sibling `properties`: with composition it would
            // reject the branches' fields, so use the keyword that sees through it.
            if !COMPOSING.iter().any(|k| map.contains_key(*k)) {
                Some((node.pointer, "additionalProperties"))
            } else {
                unevaluated.then_some((node.pointer, "unevaluatedProperties"))
            }
        })
        .collect();
    let mut schema = schema.clone();
    for (pointer, keyword) in closing {
        if let Some(Value::Object(map)) = schema.pointer_mut(&pointer) {
            map.insert(keyword.to_owned(), Value::Bool(false));
        }
    }
    schema
}

/// Whether the schema's draft knows `unevaluatedProperties` (2019-09 and later; `jsonschema`
/// assumes 2020-12 without `$schema`).
fn knows_unevaluated(root: &Value) -> bool {
    root.get("$schema")
        .and_then(Value::as_str)
        .is_none_or(|s| s.contains("2019-09") || s.contains("2020-12"))
}

/// The JSON pointers of the schemas that are combined with other fields on the same object
/// (an `allOf`, `if`/`then`/`else` or `dependentSchemas` branch, or a `$ref`/`anyOf`/`oneOf`
/// next to another source of fields), and of what they stand for in turn: closing one would
/// reject the fields it is combined with.
fn combined_targets(root: &Value) -> HashSet<String> {
    let mut direct = Vec::new();
    for node in Walk::new(EVERY).from(root.as_object()) {
        let map = node.schema;
        let sources = (COMPOSING.iter().chain(&OWN_FIELD_SOURCES))
            .filter(|k| map.contains_key(**k))
            .count();
        for (key, child) in map {
            match (key.as_str(), child) {
                ("dependentSchemas", Value::Object(schemas)) => {
                    schemas.values().for_each(|s| instance_refs(s, &mut direct));
                }
                ("allOf" | "if" | "then" | "else", _) => instance_refs(child, &mut direct),
                ("anyOf" | "oneOf", _) if sources > 1 => instance_refs(child, &mut direct),
                ("$ref", Value::String(r)) if sources > 1 => direct.extend(local_pointer(r)),
                _ => {}
            }
        }
    }
    // What a combined schema stands for (`{$ref}` aliases, `anyOf` of one object and null) is
    // combined too.
    let mut shared = HashSet::new();
    while let Some(pointer) = direct.pop() {
        if shared.insert(pointer.clone())
            && let Some(target) = root.pointer(&pointer)
        {
            instance_refs(target, &mut direct);
        }
    }
    shared
}

/// The local `$ref` targets that `schema` (or each item of a list of schemas) applies to the
/// same instance: its own `$ref` and those of its `allOf`/`anyOf`/`oneOf` branches.
fn instance_refs(schema: &Value, out: &mut Vec<String>) {
    let schemas = match schema {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    for node in schemas
        .into_iter()
        .flat_map(|s| Walk::new(BRANCHES).from(s.as_object()))
    {
        out.extend(
            node.schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(local_pointer),
        );
    }
}
