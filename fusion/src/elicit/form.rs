//! The form an elicitation shows: the schema of a Rust type as MCP elicitation takes it (flat
//! primitives), and the fields an envelope names when the client cannot ask.

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::Unanswered;

/// The form schema of `T`: schemars' object schema without `$schema` and `title`.
pub(super) fn form_schema<T: JsonSchema>() -> Result<Map<String, Value>, Unanswered> {
    let not_a_form = || Unanswered::NotAForm {
        type_name: std::any::type_name::<T>(),
    };
    let Value::Object(mut schema) = schemars::schema_for!(T).to_value() else {
        return Err(not_a_form());
    };
    // References point into `$defs`, which the form itself leaves out.
    let defs: Map<String, Value> = schema.remove_entry("$defs").into_iter().collect();
    if schema.get("type") != Some(&json!("object")) {
        return Err(not_a_form());
    }
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut() {
            *property = form_field(std::mem::take(property), &defs);
            if !is_form_field(property) {
                return Err(not_a_form());
            }
        }
    }
    Ok(crate::schema::advertised(&schema))
}

/// One field as an MCP elicitation form takes it (MCP specification 2025-11-25,
/// "Elicitation", "Requested Schema": primitives and choices): an `Option<T>` as `T` (optional
/// fields are those left out of `required`), a unit enum's `$ref` inlined, as a string `enum`
/// or, when every variant has a title, as `oneOf` of `{const, title}`; a `Vec` of a unit enum
/// as a multiple choice (`items` an `enum`, or `anyOf` of `{const, title}`); and no `format`
/// on numbers (schemars' `uint32`, which forms do not define).
fn form_field(field: Value, defs: &Map<String, Value>) -> Value {
    let Value::Object(mut field) = field else {
        return field;
    };
    // An `Option<T>` (`anyOf` of `T` and null) as `T`; any other `anyOf` stays.
    let is_null = |branch: &Value| branch.get("type") == Some(&json!("null"));
    let optional = match field
        .get("anyOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([only, null] | [null, only]) if is_null(null) && !is_null(only) => Some(only.clone()),
        _ => None,
    };
    if let Some(only) = optional {
        let description = field.remove("description");
        field = match form_field(only, defs) {
            Value::Object(inner) => inner,
            _ => Map::new(),
        };
        if let Some(description) = description {
            field.insert("description".into(), description);
        }
    }
    if let Some(Value::String(reference)) = field.remove("$ref")
        && let Some(def) = crate::schema::resolve(defs, &reference)
    {
        for (key, value) in def {
            field.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
    if let Some(Value::Array(types)) = field.get("type") {
        let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if let [single] = types.as_slice() {
            field.insert("type".into(), single.clone());
        }
    }
    if let Some(Value::Array(variants)) = field.remove("oneOf") {
        let values: Option<Vec<Value>> = variants.iter().map(|v| v.get("const").cloned()).collect();
        let titled = variants.iter().all(|v| v.get("title").is_some());
        match values {
            Some(_) if titled => {
                let titled = variants
                    .iter()
                    .map(|v| json!({"const": v["const"], "title": v["title"]}));
                field.insert("type".into(), "string".into());
                field.insert("oneOf".into(), titled.collect());
            }
            Some(values) => {
                field.insert("type".into(), "string".into());
                field.insert("enum".into(), Value::Array(values));
            }
            None => {
                field.insert("oneOf".into(), Value::Array(variants));
            }
        }
    }
    if let Some(items) = field.remove("items") {
        let mut items = form_field(items, defs);
        // A multiple choice lists titled options under `anyOf`.
        if let Some(titled) = items
            .as_object_mut()
            .and_then(|items| items.remove("oneOf"))
        {
            items = json!({"anyOf": titled});
        }
        field.insert("items".into(), items);
    }
    if matches!(
        field.get("type").and_then(Value::as_str),
        Some("integer" | "number")
    ) {
        field.remove("format");
    }
    field.remove("title");
    Value::Object(field)
}

/// Whether an elicitation form can hold the property: a string, number, integer or boolean
/// (MCP elicitation's primitive schemas), or a multiple choice (an array of an `enum` or of
/// `anyOf` titled options).
fn is_form_field(property: &Value) -> bool {
    match property.get("type").and_then(Value::as_str) {
        Some("string" | "number" | "integer" | "boolean") => true,
        Some("array") => property
            .get("items")
            .is_some_and(|items| items.get("enum").is_some() || items.get("anyOf").is_some()),
        _ => false,
    }
}

/// The fields of a form, each with its description: `email (The address to send it to)`.
pub(super) fn fields(schema: &Map<String, Value>) -> Vec<String> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(
            |(name, property)| match property.get("description").and_then(Value::as_str) {
                Some(description) => format!("{name} ({description})"),
                None => name.clone(),
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reference is a JSON Pointer (`~1` for `/`) in a URI fragment (`%3C` for `<`), not a
    /// name after the last `/`.
    #[test]
    fn a_field_inlines_an_escaped_reference() {
        let defs = json!({"$defs": {
            "Choice<T>": {"type": "string", "enum": ["a", "b"]},
            "x/y": {"type": "string", "enum": ["c"]},
        }});
        let defs = defs.as_object().unwrap();
        for (reference, choices) in [
            ("#/$defs/Choice%3CT%3E", json!(["a", "b"])),
            ("#/$defs/x~1y", json!(["c"])),
        ] {
            let field = form_field(json!({"$ref": reference}), defs);
            assert_eq!(
                field,
                json!({"type": "string", "enum": choices}),
                "{reference}"
            );
        }
    }
}
