//! Closing object schemas: every object schema that says nothing about fields it does not
//! list is made to deny them, with the keyword its draft and its composition call for (see
//! `ArgumentValidator`'s docs for the rules).

use std::collections::HashSet;

use serde_json::Value;

use super::shape::percent_decode;

/// Keywords that apply other schemas to the same instance as the object they sit in: an
/// object schema using one is closed with `unevaluatedProperties`, which sees their fields.
const COMPOSING: [&str; 6] = ["allOf", "anyOf", "oneOf", "$ref", "if", "dependentSchemas"];

/// Keywords through which a schema brings fields into the object it describes.
const FIELD_SOURCES: [&str; 11] = [
    "properties",
    "patternProperties",
    "additionalProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "if",
    "then",
    "else",
    "dependentSchemas",
];

/// `schema` with unknown fields denied in every object schema that does not already say how to
/// treat them (see [`ArgumentValidator`]). Walks the schema without recursion.
pub(crate) fn deny_unknown_fields(schema: &Value) -> Value {
    let mut schema = schema.clone();
    let unevaluated = knows_unevaluated(&schema);
    let shared = combined_targets(&schema);
    let mut stack: Vec<(String, &mut Value)> = vec![(String::new(), &mut schema)];
    while let Some((pointer, node)) = stack.pop() {
        let Value::Object(map) = node else { continue };
        let says_nothing = map.contains_key("properties")
            && !map.contains_key("additionalProperties")
            && !map.contains_key("unevaluatedProperties")
            && !map.contains_key("patternProperties");
        if says_nothing && !shared.contains(&pointer) {
            // `additionalProperties` only sees sibling `properties`: with composition it would
            // reject the branches' fields, so use the keyword that sees through it.
            if !COMPOSING.iter().any(|k| map.contains_key(*k)) {
                map.insert("additionalProperties".to_owned(), Value::Bool(false));
            } else if unevaluated {
                map.insert("unevaluatedProperties".to_owned(), Value::Bool(false));
            }
        }
        for (key, child) in map.iter_mut() {
            let at = format!("{pointer}/{}", escape_pointer(key));
            match (key.as_str(), child) {
                ("properties" | "$defs" | "definitions", Value::Object(children)) => {
                    stack.extend(
                        children
                            .iter_mut()
                            .map(|(name, c)| (format!("{at}/{}", escape_pointer(name)), c)),
                    );
                }
                ("items" | "prefixItems", Value::Array(children)) => {
                    stack.extend(
                        children
                            .iter_mut()
                            .enumerate()
                            .map(|(i, c)| (format!("{at}/{i}"), c)),
                    );
                }
                ("items" | "additionalProperties", child @ Value::Object(_)) => {
                    stack.push((at, child));
                }
                _ => {}
            }
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
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                let sources = FIELD_SOURCES
                    .iter()
                    .filter(|k| map.contains_key(**k))
                    .count();
                for (key, child) in map {
                    match key.as_str() {
                        "allOf" | "if" | "then" | "else" | "dependentSchemas" => {
                            instance_refs(child, key == "dependentSchemas", &mut direct, 0);
                        }
                        "anyOf" | "oneOf" if sources > 1 => {
                            instance_refs(child, false, &mut direct, 0);
                        }
                        "$ref" if sources > 1 => direct.extend(local_pointer(child)),
                        _ => {}
                    }
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    // What a combined schema stands for (`{$ref}` aliases, `anyOf` of one object and null) is
    // combined too.
    let mut shared = HashSet::new();
    while let Some(pointer) = direct.pop() {
        if shared.insert(pointer.clone())
            && let Some(target) = root.pointer(&pointer)
        {
            let mut more = Vec::new();
            instance_refs(target, false, &mut more, 0);
            direct.extend(more);
        }
    }
    shared
}

/// The local `$ref` targets that `schema` (or each of its values, for `map_of_schemas`, or
/// each item of an array of schemas) applies to the same instance: its own `$ref` and those of
/// its `allOf`/`anyOf`/`oneOf` branches.
fn instance_refs(schema: &Value, map_of_schemas: bool, out: &mut Vec<String>, depth: u8) {
    const MAX_DEPTH: u8 = 16;
    if depth > MAX_DEPTH {
        return;
    }
    match schema {
        Value::Array(items) => {
            for item in items {
                instance_refs(item, false, out, depth + 1);
            }
        }
        Value::Object(map) if map_of_schemas => {
            for value in map.values() {
                instance_refs(value, false, out, depth + 1);
            }
        }
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref") {
                out.extend(local_pointer(reference));
            }
            for key in ["allOf", "anyOf", "oneOf"] {
                if let Some(branches) = map.get(key) {
                    instance_refs(branches, false, out, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// The JSON pointer of a local `$ref` (`#/$defs/A%3CB%3E` → `/$defs/A<B>`).
fn local_pointer(reference: &Value) -> Option<String> {
    let fragment = reference.as_str()?.strip_prefix('#')?;
    percent_decode(fragment)
}

/// `name` as a JSON pointer token (`~` → `~0`, `/` → `~1`).
pub(crate) fn escape_pointer(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
