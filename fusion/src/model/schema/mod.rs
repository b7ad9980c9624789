//! Input schemas as a tool advertises them: one flat object per tool, the discriminator as a
//! string `enum`, the union of its actions' fields, and no top-level `oneOf`/`anyOf`/`allOf`
//! (several LLM APIs reject tools whose schema starts with one), rewritten into the part of JSON
//! Schema every major LLM API accepts (see [`crate::portability`]); or, by choice
//! ([`InputSchemas::AsWritten`]), as the arguments type writes it.

pub(crate) mod generate;
mod headers;
mod portable;
mod walk;
mod written;

pub(crate) use headers::{HEADER_KEYWORD, check_headers};
pub(crate) use portable::{GEMINI_FORMATS, GEMINI_KEYWORDS};
pub(crate) use walk::{
    BRANCHES, EVERY, Walk, at_pointer, escape_pointer, local_definition, local_pointer,
    names_subschemas, resolve, unescape_pointer_token,
};
pub use written::{InputSchemas, input_schema};

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::model::definition::{ActionDefinition, SchemaError, ToolDefinition};

/// The checks a definition must pass before it is served, made once when the tool is registered
/// with a `Server` or `Tester` (which panics), or at the first call of a tool called directly:
///
/// - no action's arguments declare a field named like the discriminator (see
///   [`discriminator_clash`]);
/// - every action's arguments are a JSON object: an input schema whose top-level `type` (after
///   merging a top-level `oneOf`/`anyOf`/`allOf`) is present and not `"object"` (a unit or
///   newtype struct, a `Vec`, a number) could never be called, since MCP arguments are an
///   object.
///
/// # Errors
/// A [`SchemaError`] naming the first offending action.
pub fn check_definition(definition: &ToolDefinition) -> Result<(), SchemaError> {
    if let Some(action) = discriminator_clash(definition) {
        return Err(SchemaError::new(
            definition.qualified_name(&action.name),
            format!(
                "the arguments of `{}` have a field named `{}`, which is the tool's \
                 discriminator; rename the field or choose another discriminator with \
                 `#[fusion::tool(discriminator = \"...\")]`",
                action.name,
                definition.discriminator.as_deref().unwrap_or_default()
            ),
        ));
    }
    let not_object = definition.actions.iter().find_map(|action| {
        let flat = flatten_top_level(&action.input_schema);
        let ty = flat.get("type").filter(|_| !accepts_objects(&flat))?;
        Some((action, ty.to_string()))
    });
    if let Some((action, ty)) = not_object {
        return Err(SchemaError::new(
            definition.qualified_name(&action.name),
            format!(
                "the arguments of `{}` have the JSON type {ty}; the arguments type must be a \
                 struct with named fields (a JSON object)",
                action.name
            ),
        ));
    }
    Ok(())
}

/// The first action whose arguments declare a field with the discriminator's name: such an
/// action could never be called (the router consumes the field), so tools are refused.
pub fn discriminator_clash(definition: &ToolDefinition) -> Option<&ActionDefinition> {
    let discriminator = definition.discriminator.as_deref()?;
    definition.actions.iter().find(|action| {
        flatten_top_level(&action.input_schema)
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|props| props.contains_key(discriminator))
    })
}

/// Whether the schema's `type` is `"object"` or a list with it (`["object", "null"]`).
pub(crate) fn accepts_objects(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        ty => ty.is_some_and(|t| t == "object"),
    }
}

/// The names a schema lists under `required`.
pub(crate) fn required(schema: &Map<String, Value>) -> Vec<&str> {
    let names = schema.get("required").and_then(Value::as_array);
    names
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// `schema` as advertised to clients: without `$schema` (the dialect is left to the client,
/// whose validator may reject one it does not know) and `title` (the Rust type's name).
pub(crate) fn advertised(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut schema = schema.clone();
    schema.remove("$schema");
    schema.remove("title");
    schema
}

/// Adds `field` to `properties`; declared differently before, either is accepted.
fn add_field(properties: &mut Map<String, Value>, field: &str, schema: &Value) {
    match properties.get_mut(field) {
        None => {
            properties.insert(field.to_owned(), schema.clone());
        }
        Some(existing) if existing != schema => merge_alternative(existing, schema),
        Some(_) => {}
    }
}

/// The JSON type name of a value, as messages say it.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The flat input schema of a tool: one object with the discriminator as a
/// string `enum`, the union of all actions' fields (each field's description says which
/// actions use it and where it is required) and `required: [discriminator]`. Never a
/// top-level `oneOf`/`anyOf`/`allOf`. A single-function tool gets its action's schema.
///
/// Written for every major LLM API (Anthropic, OpenAI, Gemini; see [`crate::portability`]):
/// definitions inlined (no `$ref`/`$defs`), no `oneOf`/`allOf`/`const` (a unit enum is a string
/// `enum`, an `Option` is `nullable: true`, alternatives are a nested `anyOf`), and only the
/// keywords the Gemini API's schema object has (no `additionalProperties`, no `format` it does
/// not know). A recursive type keeps the `$ref` that closes its cycle, which
/// [`crate::portability::check_tool`] reports. `x-mcp-header` annotations (SEP-2243) stay on
/// their fields, for the MCP client. Arguments are still validated against each action's own
/// schema: nothing dropped here is accepted.
pub fn flat_input_schema(definition: &ToolDefinition) -> Map<String, Value> {
    portable::portable(&flat_schema(definition))
}

/// [`flat_input_schema`] before the rewrite for LLM APIs: the actions' keywords and
/// definitions as schemars wrote them.
pub(super) fn flat_schema(definition: &ToolDefinition) -> Map<String, Value> {
    let Some(discriminator) = &definition.discriminator else {
        let mut schema = definition
            .actions
            .first()
            .map(|a| advertised(&flatten_top_level(&a.input_schema)))
            .unwrap_or_default();
        schema.insert("type".into(), "object".into());
        return schema;
    };

    let mut properties = Map::new();
    let mut defs = Map::new();
    // For each field: the actions that use it, `(required)` where they require it.
    let mut users: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let flattened: Vec<Map<String, Value>> = definition
        .actions
        .iter()
        .map(|a| flatten_top_level(&a.input_schema))
        .collect();
    for (action, input_schema) in definition.actions.iter().zip(&flattened) {
        let required = required(input_schema);
        if let Some(Value::Object(props)) = input_schema.get("properties") {
            // A field named like the discriminator never overwrites it (see
            // `discriminator_clash`, which refuses such tools at their first call).
            for (field, schema) in props.iter().filter(|(f, _)| *f != discriminator) {
                add_field(&mut properties, field, schema);
                let user = if required.contains(&field.as_str()) {
                    format!("{} (required)", action.name)
                } else {
                    action.name.clone()
                };
                users.entry(field).or_default().push(user);
            }
        }
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(d)) = input_schema.get(key) {
                for (name, def) in d {
                    defs.entry(name.clone()).or_insert_with(|| def.clone());
                }
            }
        }
    }
    for (field, list) in &users {
        if let Some(Value::Object(schema)) = properties.get_mut(*field) {
            let note = format!("Used by: {}.", list.join(", "));
            // A field without a description of its own is described by its type's doc, which
            // the note would otherwise hide once the type is inlined.
            let own = schema
                .get("description")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .or_else(|| referenced_description(schema, &defs));
            let description = match own {
                Some(d) => format!("{d} {note}"),
                None => note,
            };
            schema.insert("description".into(), description.into());
        }
    }

    let names: Vec<&str> = definition.actions.iter().map(|a| a.name.as_str()).collect();
    let action_docs = definition
        .actions
        .iter()
        .map(|a| {
            let paragraph = first_paragraph(&a.description);
            let summary = paragraph.trim_end_matches('.');
            if summary.is_empty() {
                format!("'{}'.", a.name)
            } else {
                format!("'{}': {summary}.", a.name)
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut all = Map::new();
    all.insert(
        discriminator.clone(),
        json!({
            "type": "string",
            "enum": names,
            "description": format!("The action to run. {action_docs}"),
        }),
    );
    all.extend(properties);

    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(all));
    schema.insert("required".into(), json!([discriminator]));
    if !defs.is_empty() {
        schema.insert("$defs".into(), Value::Object(defs));
    }
    schema
}

/// An arguments schema with a top-level `oneOf`/`anyOf`/`allOf` (an enum arguments type, a
/// flattened struct) rewritten as one object for advertising: the union of the alternatives'
/// fields (a field declared differently becomes a nested `anyOf`), required where every
/// alternative requires it (`allOf`: where any part does). Validation keeps the original
/// schema, so nothing is accepted that the arguments type rejects.
pub(crate) fn flatten_top_level(schema: &Map<String, Value>) -> Map<String, Value> {
    let combinator = ["oneOf", "anyOf", "allOf"]
        .into_iter()
        .find(|k| matches!(schema.get(*k), Some(Value::Array(_))));
    let Some(combinator) = combinator else {
        return schema.clone();
    };
    let resolve = |branch: &'_ Value| -> Option<Map<String, Value>> {
        let object = branch.as_object()?;
        match object.get("$ref").and_then(Value::as_str) {
            Some(reference) => resolve(schema, reference).cloned(),
            None => Some(object.clone()),
        }
    };
    let mut out: Map<String, Value> = schema
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "oneOf" | "anyOf" | "allOf"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut properties = match out.remove("properties") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    let mut required: Vec<Value> = match out.remove("required") {
        Some(Value::Array(r)) => r,
        _ => Vec::new(),
    };
    let branches: Vec<Map<String, Value>> = schema[combinator]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(resolve)
        .map(|b| flatten_top_level(&b))
        .collect();
    for branch in &branches {
        if let Some(Value::Object(props)) = branch.get("properties") {
            for (field, field_schema) in props {
                add_field(&mut properties, field, field_schema);
            }
        }
    }
    let extra: Vec<&str> = if combinator == "allOf" {
        branches.iter().flat_map(self::required).collect()
    } else {
        let mut common = branches.first().map(self::required).unwrap_or_default();
        for branch in branches.iter().skip(1) {
            let theirs = self::required(branch);
            common.retain(|f| theirs.contains(f));
        }
        common
    };
    for field in extra.into_iter().map(Value::from) {
        if !required.contains(&field) {
            required.push(field);
        }
    }
    out.insert("type".into(), "object".into());
    out.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    out
}

/// Two actions declare one field with different schemas: accept either (a nested `anyOf`,
/// which LLM APIs allow below the top level). When both send the field in the same header
/// (`x-mcp-header`) with the same `type`, those two stay on the field itself, where MCP clients
/// look for them; declared differently, they stay in the alternatives (which
/// [`check_headers`] refuses).
fn merge_alternative(existing: &mut Value, other: &Value) {
    let shared = ["type", HEADER_KEYWORD]
        .map(|keyword| (existing.get(keyword)).filter(|value| other.get(keyword) == Some(*value)));
    if let [Some(ty), Some(header)] = shared {
        let (ty, header) = (ty.clone(), header.clone());
        let strip = |schema: &Value| {
            let mut schema = schema.clone();
            if let Some(map) = schema.as_object_mut() {
                map.remove("type");
                map.remove(HEADER_KEYWORD);
            }
            schema
        };
        let mut alternatives = strip(existing);
        merge_any_of(&mut alternatives, &strip(other));
        let mut field = Map::new();
        field.insert("type".into(), ty);
        field.insert(HEADER_KEYWORD.into(), header);
        if let Value::Object(alternatives) = alternatives {
            field.extend(alternatives);
        }
        *existing = Value::Object(field);
        return;
    }
    merge_any_of(existing, other);
}

/// [`merge_alternative`] without the header: `existing` becomes (or, when it is one already,
/// grows) an `anyOf` of both.
fn merge_any_of(existing: &mut Value, other: &Value) {
    let only_any_of = existing.as_object().is_some_and(|o| o.len() == 1);
    if let Some(Value::Array(alternatives)) = existing.get_mut("anyOf")
        && only_any_of
    {
        if !alternatives.contains(other) {
            alternatives.push(other.clone());
        }
        return;
    }
    *existing = json!({ "anyOf": [existing.clone(), other.clone()] });
}

/// The first paragraph of a description, its hard-wrapped lines joined with spaces (doc
/// comments wrap at the source's line width, not at sentence ends).
fn first_paragraph(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty())
        .take_while(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The description of the local definition a bare `$ref` field points to (`#/$defs/Name`).
fn referenced_description<'d>(
    schema: &Map<String, Value>,
    defs: &'d Map<String, Value>,
) -> Option<&'d str> {
    let name = local_definition(schema.get("$ref")?.as_str()?)?;
    defs.get(&name)?
        .get("description")?
        .as_str()
        .filter(|d| !d.is_empty())
}

/// Definitions the unit tests of this module and of `dispatch` share.
#[cfg(test)]
pub(crate) mod fixtures {
    use serde_json::{Value, json};

    use crate::model::definition::{ActionDefinition, ToolDefinition};

    /// An action named `name` taking arguments of `schema`.
    pub(crate) fn action(name: &str, schema: Value) -> ActionDefinition {
        ActionDefinition {
            description: format!("Does\n{name}.\n\nMore text."),
            input_schema: schema.as_object().unwrap().clone(),
            ..ActionDefinition::named(name)
        }
    }

    /// A two-action tool whose actions declare `limit` differently.
    pub(crate) fn billing() -> ToolDefinition {
        ToolDefinition {
            name: "billing".into(),
            description: "Invoices.".into(),
            title: None,
            discriminator: Some("action".into()),
            actions: vec![
                action(
                    "list_invoices",
                    json!({"type": "object", "properties": {"limit": {"type": "integer"}}}),
                ),
                action(
                    "get_invoice",
                    json!({"type": "object", "properties": {"id": {"type": "string", "description": "Invoice ID."}, "limit": {"type": "string"}}, "required": ["id"]}),
                ),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{action, billing};
    use super::*;

    #[test]
    fn flat_schema_is_one_object_with_the_union_of_fields() {
        let schema = flat_input_schema(&billing());
        for combinator in ["oneOf", "anyOf", "allOf"] {
            assert!(!schema.contains_key(combinator));
        }
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["action"]));
        let props = schema["properties"].as_object().unwrap();
        assert_eq!(
            props["action"]["enum"],
            json!(["list_invoices", "get_invoice"])
        );
        assert_eq!(
            props["action"]["description"],
            "The action to run. 'list_invoices': Does list_invoices. 'get_invoice': Does get_invoice."
        );
        assert_eq!(
            props["id"]["description"],
            "Invoice ID. Used by: get_invoice (required)."
        );
        // Declared differently by two actions: either is accepted.
        assert_eq!(
            props["limit"]["anyOf"],
            json!([{"type": "integer"}, {"type": "string"}])
        );
        assert_eq!(
            props["limit"]["description"],
            "Used by: list_invoices, get_invoice."
        );
    }

    #[test]
    fn enum_arguments_are_advertised_as_one_object() {
        // What schemars emits for `#[serde(tag = "kind")] enum Pay { Card { number }, Iban { iban } }`.
        let schema = json!({
            "oneOf": [
                {"type": "object", "properties": {"kind": {"const": "Card"}, "number": {"type": "string"}}, "required": ["kind", "number"]},
                {"$ref": "#/$defs/Iban"}
            ],
            "$defs": {"Iban": {"type": "object", "properties": {"kind": {"const": "Iban"}, "iban": {"type": "string"}}, "required": ["kind", "iban"]}}
        });
        let single = ToolDefinition {
            discriminator: None,
            actions: vec![action("pay", schema.clone())],
            ..billing()
        };
        let flat = flat_input_schema(&single);
        assert!(!flat.contains_key("oneOf"));
        assert_eq!(flat["type"], "object");
        assert_eq!(flat["required"], json!(["kind"]));
        assert_eq!(
            flat["properties"]["kind"],
            json!({"type": "string", "enum": ["Card", "Iban"]})
        );
        assert_eq!(flat["properties"]["iban"], json!({"type": "string"}));

        let mut multi = billing();
        multi.actions.push(action("pay", schema));
        let flat = flat_input_schema(&multi);
        assert!(
            flat["properties"]["number"]["description"]
                .as_str()
                .unwrap()
                .contains("Used by: pay.")
        );
    }

    #[test]
    fn a_field_without_a_description_keeps_its_types_doc_next_to_the_note() {
        let mut multi = billing();
        multi.actions.push(action(
            "pay",
            json!({
                "type": "object",
                "properties": {"card": {"$ref": "#/$defs/Card"}},
                "required": ["card"],
                "$defs": {"Card": {"description": "A payment card.", "type": "object", "properties": {"number": {"type": "string"}}}}
            }),
        ));
        let flat = flat_input_schema(&multi);
        assert_eq!(
            flat["properties"]["card"]["description"],
            "A payment card. Used by: pay (required)."
        );
    }
}
