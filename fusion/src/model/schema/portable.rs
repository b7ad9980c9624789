//! Input schemas rewritten into the part of JSON Schema the major LLM APIs all accept: local
//! `$ref`s inlined, `oneOf`/`allOf`/`const` and `null` expressed with `anyOf`, `enum` and
//! `nullable`, and only the keywords of the Gemini API's schema object kept.
//!
//! The rewrite only ever advertises: arguments are validated against the action's own schema,
//! so a keyword dropped here (`additionalProperties`, `uniqueItems`, a `format` Gemini does not
//! know) still holds, and a loosening (`oneOf` read as `anyOf`) accepts nothing more.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::headers::HEADER_KEYWORD;
use super::walk::local_definition;

/// The keywords kept: the fields of the Gemini API's `Schema` object
/// (<https://ai.google.dev/api/caching#Schema>), which rejects any other. Anthropic and OpenAI
/// read them all (`nullable` is OpenAPI's; JSON Schema validators ignore it).
pub(crate) const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// The `format` values the Gemini API accepts, by `type` (see [`GEMINI_KEYWORDS`]).
pub(crate) const GEMINI_FORMATS: &[(&str, &str)] = &[
    ("number", "float"),
    ("number", "double"),
    ("integer", "int32"),
    ("integer", "int64"),
    ("string", "enum"),
    ("string", "date-time"),
];

/// `schema` as advertised (see the module's doc): a reference's own keywords (a field's
/// description) win over its definition's, and the root keeps `properties` (OpenAI requires
/// them). The reference that closes a recursive type's cycle stays a `$ref`, its definition
/// under `$defs`, which the portability check reports.
pub(crate) fn portable(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut defs = Map::new();
    for key in ["definitions", "$defs"] {
        if let Some(Value::Object(d)) = schema.get(key) {
            defs.extend(d.clone());
        }
    }
    let mut rewriter = Rewriter {
        defs: &defs,
        stack: Vec::new(),
        recursive: BTreeSet::new(),
    };
    let mut out = rewriter.object(schema.clone());
    // The definitions recursive references need, themselves rewritten; rewriting one may find
    // another cycle, so until no new name turns up.
    let mut kept = Map::new();
    while let Some(name) = rewriter
        .recursive
        .iter()
        .find(|name| !kept.contains_key(*name))
        .cloned()
    {
        let definition = match defs.get(&name) {
            Some(Value::Object(def)) => {
                rewriter.stack.push(name.clone());
                let def = rewriter.object(def.clone());
                rewriter.stack.pop();
                Value::Object(def)
            }
            Some(other) => other.clone(),
            None => Value::Object(Map::new()),
        };
        kept.insert(name, definition);
    }
    if !kept.is_empty() {
        out.insert("$defs".into(), Value::Object(kept));
    }
    if out.get("type").and_then(Value::as_str) == Some("object") {
        out.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    out
}

/// Adds `text` to the end of `schema`'s description (its whole description when it has none).
fn append_description(schema: &mut Map<String, Value>, text: &str) {
    let description = match schema.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d} {text}"),
        _ => text.to_owned(),
    };
    schema.insert("description".into(), description.into());
}

struct Rewriter<'a> {
    defs: &'a Map<String, Value>,
    /// The definitions being inlined, outermost first: a reference to one of them is a cycle.
    stack: Vec<String>,
    /// The definitions a reference closing a cycle points at.
    recursive: BTreeSet<String>,
}

impl Rewriter<'_> {
    fn schema(&mut self, value: Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(self.object(map)),
            // `true` accepts anything, as `{}` does; Gemini takes only schema objects.
            Value::Bool(true) => Value::Object(Map::new()),
            other => other,
        }
    }

    fn object(&mut self, mut map: Map<String, Value>) -> Map<String, Value> {
        map.remove("$defs");
        map.remove("definitions");
        if let Some(reference) = map.get("$ref").and_then(Value::as_str).map(str::to_owned)
            && let Some(name) = local_definition(&reference)
            && let Some(definition) = self.defs.get(&name)
        {
            if self.stack.contains(&name) {
                self.recursive.insert(name);
                // Gemini allows only `description` and `default` next to a `$ref`.
                map.retain(|k, _| matches!(k.as_str(), "$ref" | "description" | "default"));
                return map;
            }
            map.remove("$ref");
            let mut merged = match definition {
                Value::Object(def) => def.clone(),
                _ => Map::new(),
            };
            merged.extend(map);
            self.stack.push(name);
            let out = self.object(merged);
            self.stack.pop();
            return out;
        }

        // The node's own children first, so nothing merged in below is rewritten twice.
        if let Some(Value::Object(properties)) = map.remove("properties") {
            let properties = properties
                .into_iter()
                .map(|(field, schema)| (field, self.schema(schema)))
                .collect();
            map.insert("properties".into(), Value::Object(properties));
        }
        match map.remove("items") {
            Some(items @ Value::Object(_)) | Some(items @ Value::Bool(true)) => {
                map.insert("items".into(), self.schema(items));
            }
            // `items: false` (after `prefixItems`) says nothing Gemini can read.
            Some(Value::Bool(false)) | None => {}
            Some(other) => {
                map.insert("items".into(), other);
            }
        }

        if let Some(Value::Array(parts)) = map.remove("allOf") {
            for part in parts {
                if let Value::Object(part) = self.schema(part) {
                    merge_under(&mut map, part);
                }
            }
        }
        let alternatives = match (map.remove("anyOf"), map.remove("oneOf")) {
            (Some(Value::Array(any)), _) => Some(any),
            (_, Some(Value::Array(one))) => Some(one),
            _ => None,
        };
        if let Some(alternatives) = alternatives {
            self.alternatives(&mut map, alternatives);
        }
        if let Some(value) = map.remove("const") {
            map.entry("enum")
                .or_insert_with(|| Value::Array(vec![value]));
        }
        if let Some(Value::Array(types)) = map.get("type").cloned() {
            let others: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
            if map.get("type").and_then(Value::as_array).map(Vec::len) != Some(others.len()) {
                map.insert("nullable".into(), Value::Bool(true));
            }
            match others.as_slice() {
                [] => {
                    map.remove("type");
                }
                [single] => {
                    map.insert("type".into(), single.clone());
                }
                _ if !map.contains_key("anyOf") => {
                    map.remove("type");
                    let branches = others
                        .into_iter()
                        .map(|t| Value::Object(Map::from_iter([("type".to_owned(), t)])))
                        .collect();
                    map.insert("anyOf".into(), Value::Array(branches));
                }
                _ => {}
            }
        }
        if let Some(Value::Array(values)) = map.get("enum")
            && !map.contains_key("type")
            && values.iter().all(Value::is_string)
        {
            map.insert("type".into(), "string".into());
        }
        let format_known = match (map.get("type"), map.get("format")) {
            (Some(Value::String(ty)), Some(Value::String(format))) => {
                GEMINI_FORMATS.contains(&(ty.as_str(), format.as_str()))
            }
            _ => true,
        };
        // What the dropped keywords said, kept for the model in the description.
        let mut facts = Vec::new();
        let string = map.get("type") == Some(&Value::String("string".into()));
        if !format_known && let Some(Value::String(format)) = map.remove("format") {
            // A string's format (`email`, `uuid`, `date`) says what to send; a number's
            // (`uint32`) is its `minimum` and range, already there.
            if string {
                facts.push(format!("Format: {format}."));
            }
        }
        if map.get("uniqueItems") == Some(&Value::Bool(true)) {
            facts.push("Items are unique.".to_owned());
        }
        if let Some(Value::Object(values)) = map.get("additionalProperties")
            && let Some(Value::String(ty)) = values.get("type")
        {
            facts.push(format!("An object of {ty} values, keyed by name."));
        }
        if !facts.is_empty() {
            append_description(&mut map, &facts.join(" "));
        }
        // `x-mcp-header` is for the MCP client, which sends the field in a header too.
        map.retain(|keyword, _| {
            GEMINI_KEYWORDS.contains(&keyword.as_str())
                || matches!(keyword.as_str(), "$ref" | HEADER_KEYWORD)
        });
        map
    }

    /// Rewrites the branches of an `anyOf`/`oneOf` into `map`: `null` branches as `nullable`,
    /// branches that are all constants as one `enum`, a single remaining branch merged in.
    fn alternatives(&mut self, map: &mut Map<String, Value>, alternatives: Vec<Value>) {
        let mut others = Vec::new();
        for branch in alternatives {
            let branch = self.schema(branch);
            if is_null(&branch) {
                map.insert("nullable".into(), Value::Bool(true));
            } else {
                others.push(branch);
            }
        }
        if let Some((values, notes)) = constants(&others) {
            if !notes.is_empty() {
                append_description(map, &notes.join(" "));
            }
            if values.iter().all(Value::is_string) {
                map.entry("type").or_insert_with(|| "string".into());
            }
            map.insert("enum".into(), Value::Array(values));
            return;
        }
        match <[Value; 1]>::try_from(others) {
            Ok([Value::Object(single)]) => merge_under(map, single),
            Ok([other]) => {
                map.insert("anyOf".into(), Value::Array(vec![other]));
            }
            Err(others) if others.is_empty() => {}
            Err(others) => {
                map.insert("anyOf".into(), Value::Array(others));
            }
        }
    }
}

/// Whether `schema` accepts only `null`.
fn is_null(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    let only_null = map.get("type").is_some_and(|t| t == "null")
        || map
            .get("enum")
            .is_some_and(|e| *e == Value::Array(vec![Value::Null]));
    only_null && only_constant_keywords(map)
}

/// Whether `map` says no more than a set of constants does: a type, an `enum`, a description.
fn only_constant_keywords(map: &Map<String, Value>) -> bool {
    map.keys()
        .all(|k| matches!(k.as_str(), "type" | "enum" | "description" | "title"))
}

/// When every branch is a set of constants (an `enum`, with at most a type, title and
/// description; schemars' shape for a unit enum whose variants have docs): the values in order,
/// and `'value': description.` for each documented branch.
fn constants(branches: &[Value]) -> Option<(Vec<Value>, Vec<String>)> {
    if branches.len() < 2 {
        return None;
    }
    let mut values = Vec::new();
    let mut notes = Vec::new();
    for branch in branches {
        let map = branch
            .as_object()
            .filter(|map| only_constant_keywords(map))?;
        let Some(Value::Array(enumerated)) = map.get("enum") else {
            return None;
        };
        if let Some(description) = map.get("description").and_then(Value::as_str) {
            let summary = description.trim().trim_end_matches('.');
            for value in enumerated {
                let shown = value
                    .as_str()
                    .map_or_else(|| value.to_string(), str::to_owned);
                notes.push(format!("'{shown}': {summary}."));
            }
        }
        values.extend(enumerated.iter().cloned());
    }
    Some((values, notes))
}

/// Merges `part` into `map`: properties and required fields united, every other keyword of
/// `part` added where `map` has none (the outer node's description wins).
fn merge_under(map: &mut Map<String, Value>, part: Map<String, Value>) {
    for (keyword, value) in part {
        match (keyword.as_str(), map.get_mut(&keyword), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (field, schema) in theirs {
                    mine.entry(field).or_insert(schema);
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for field in theirs {
                    if !mine.contains(&field) {
                        mine.push(field);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                map.insert(keyword, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rewrite(schema: Value) -> Value {
        Value::Object(portable(schema.as_object().unwrap()))
    }

    #[test]
    fn references_are_inlined_with_the_field_description_winning() {
        let schema = json!({
            "type": "object",
            "properties": {
                "address": {"$ref": "#/$defs/Address", "description": "Where to ship."},
                "billing": {"$ref": "#/definitions/Address"}
            },
            "$defs": {"Address": {"type": "object", "description": "An address.", "properties": {"zip": {"type": "string"}}, "additionalProperties": false}},
            "definitions": {"Address": {"type": "object", "description": "An address.", "properties": {"zip": {"type": "string"}}}}
        });
        let address = json!({"type": "object", "description": "Where to ship.", "properties": {"zip": {"type": "string"}}});
        assert_eq!(
            rewrite(schema),
            json!({
                "type": "object",
                "properties": {
                    "address": address,
                    "billing": {"type": "object", "description": "An address.", "properties": {"zip": {"type": "string"}}}
                }
            })
        );
    }

    #[test]
    fn unit_enums_and_constants_become_string_enums() {
        // schemars: a unit enum whose variants have docs, and a tag.
        let schema = json!({
            "type": "object",
            "properties": {
                "currency": {"oneOf": [
                    {"type": "string", "const": "EUR", "description": "Euro."},
                    {"type": "string", "const": "USD"}
                ], "description": "The currency."},
                "kind": {"const": "card"}
            }
        });
        assert_eq!(
            rewrite(schema)["properties"],
            json!({
                "currency": {"type": "string", "enum": ["EUR", "USD"], "description": "The currency. 'EUR': Euro."},
                "kind": {"type": "string", "enum": ["card"]}
            })
        );
    }

    #[test]
    fn null_alternatives_become_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "status": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}], "description": "Only these."},
                "note": {"type": ["string", "null"], "format": "email"},
                "count": {"type": ["integer", "null"], "format": "int64"},
                "either": {"type": ["integer", "string"]}
            },
            "$defs": {"Status": {"type": "string", "enum": ["open", "paid"]}}
        });
        assert_eq!(
            rewrite(schema)["properties"],
            json!({
                "status": {"type": "string", "enum": ["open", "paid"], "nullable": true, "description": "Only these."},
                // A string format Gemini lacks is kept for the model in the description.
                "note": {"type": "string", "nullable": true, "description": "Format: email."},
                "count": {"type": "integer", "format": "int64", "nullable": true},
                "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]}
            })
        );
    }

    #[test]
    fn all_of_merges_and_one_of_reads_as_any_of() {
        let schema = json!({
            "type": "object",
            "properties": {
                "both": {"allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"$ref": "#/$defs/B"}
                ]},
                "pay": {"oneOf": [
                    {"type": "object", "properties": {"card": {"type": "string"}}},
                    {"type": "object", "properties": {"iban": {"type": "string"}}}
                ]}
            },
            "$defs": {"B": {"type": "object", "properties": {"b": {"type": "integer", "format": "uint32", "minimum": 0}}, "required": ["b"]}}
        });
        let out = rewrite(schema);
        assert_eq!(
            out["properties"]["both"],
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer", "minimum": 0}}, "required": ["a", "b"]})
        );
        assert_eq!(
            out["properties"]["pay"]["anyOf"].as_array().unwrap().len(),
            2
        );
        assert!(out.get("$defs").is_none());
    }

    #[test]
    fn a_recursive_type_keeps_the_reference_that_closes_the_cycle() {
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "$defs": {
                "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
            }
        });
        let out = rewrite(schema);
        assert_eq!(
            out["properties"]["tree"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Node"})
        );
        assert_eq!(
            out["$defs"]["Node"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Node"})
        );
    }

    #[test]
    fn unknown_keywords_are_dropped_and_the_root_keeps_properties() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {"tags": {"type": "array", "uniqueItems": true, "items": true}}
        });
        assert_eq!(
            rewrite(schema),
            json!({"type": "object", "properties": {"tags": {"type": "array", "items": {}, "description": "Items are unique."}}})
        );
        assert_eq!(
            rewrite(json!({"type": "object"})),
            json!({"type": "object", "properties": {}})
        );
    }
}
