//! `x-mcp-header` (MCP 2026-07-28, "Custom Headers from Tool Parameters", SEP-2243): a property
//! of an input schema annotated `"x-mcp-header": "Region"` is an argument a Streamable HTTP
//! client also sends as the header `Mcp-Param-Region`, so that a load balancer or gateway can
//! route on it without reading the body; the server checks that the two agree.
//!
//! A client must drop from `tools/list` every tool whose annotations break a rule of the
//! specification; [`check_headers`] applies them to the schema a server publishes, so that a
//! tool breaking one is refused when it is registered instead of vanishing from clients.

use serde_json::{Map, Value};

use super::walk::{EVERY, Walk, unescape_pointer_token};

/// The annotation's keyword.
pub(crate) const HEADER_KEYWORD: &str = "x-mcp-header";

/// The JSON types an annotated property may have (`number` is not permitted: a float has no
/// one text form to compare).
const HEADER_TYPES: &[&str] = &["string", "integer", "boolean"];

/// Checks every `x-mcp-header` annotation of the input schema `schema` against SEP-2243's
/// rules: a non-empty HTTP token (RFC 9110 `tchar`s), unique among the schema's annotations
/// ignoring case, on a property reached from the root through `properties` alone (not the
/// root, not inside `$defs`, `items`, `anyOf`, …) whose `type` is one of `string`, `integer`
/// and `boolean`.
///
/// # Errors
/// The first rule broken, in a sentence naming the annotation's place (a JSON Pointer into the
/// input schema) and what to change.
pub(crate) fn check_headers(schema: &Map<String, Value>) -> Result<(), String> {
    let mut seen: Vec<(String, String)> = Vec::new();
    for node in Walk::new(EVERY).from(Some(schema)) {
        let Some(header) = node.schema.get(HEADER_KEYWORD) else {
            continue;
        };
        let at = if node.pointer.is_empty() {
            "the root".to_owned()
        } else {
            format!("`{}`", node.pointer)
        };
        let Some(path) = property_path(&node.pointer) else {
            return Err(format!(
                "`x-mcp-header` at {at} is not on a property reached from the root through \
                 `properties` alone, where MCP clients look for it (SEP-2243); annotate a field \
                 of the arguments type itself (a nested struct's field only when the struct is \
                 `#[schemars(inline)]`; two actions declaring one field differently put it \
                 under `anyOf`: declare it alike, or expose the tool flat)"
            ));
        };
        let Value::String(name) = header else {
            return Err(format!(
                "`x-mcp-header` of `{path}` must be a string (the header name after \
                 `Mcp-Param-`)"
            ));
        };
        if name.is_empty() || !name.chars().all(is_tchar) {
            return Err(format!(
                "`x-mcp-header` `{}` of `{path}` is not an HTTP header name: use one or more \
                 ASCII letters, digits and `!#$%&'*+-.^_`|~`",
                name.escape_debug()
            ));
        }
        if let Some((_, first)) = seen.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            return Err(format!(
                "`x-mcp-header` `{name}` of `{path}` is also the header of `{first}` (header \
                 names are compared ignoring case); give each field its own"
            ));
        }
        let ty = node.schema.get("type");
        if !ty
            .and_then(Value::as_str)
            .is_some_and(|t| HEADER_TYPES.contains(&t))
        {
            let shown = ty.map_or_else(|| "none".to_owned(), Value::to_string);
            return Err(format!(
                "`x-mcp-header` `{name}` of `{path}` needs a property of one type among \
                 `string`, `integer` and `boolean` (its `type` is {shown}; an `Option` field is \
                 `[T, \"null\"]` as written: make the field required, or publish the portable \
                 schema, where it is `nullable`)"
            ));
        }
        seen.push((name.clone(), path));
    }
    Ok(())
}

/// `region` or `location.region` for the pointer `/properties/location/properties/region`;
/// `None` unless the pointer is one or more `/properties/<name>` steps.
fn property_path(pointer: &str) -> Option<String> {
    let tokens: Vec<&str> = pointer.split('/').skip(1).collect();
    let names = (tokens.chunks(2))
        .map(|step| match step {
            ["properties", name] => Some(unescape_pointer_token(name)),
            _ => None,
        })
        .collect::<Option<Vec<String>>>()?;
    (!names.is_empty()).then(|| names.join("."))
}

/// An RFC 9110 token character (section 5.6.2).
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(schema: Value) -> Result<(), String> {
        check_headers(schema.as_object().unwrap())
    }

    #[test]
    fn annotations_on_the_properties_path_pass() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "location": {"type": "object", "properties": {
                    "zone": {"type": "integer", "x-mcp-header": "Zone-Id"}
                }},
                // Instance data naming the keyword is no annotation.
                "config": {"type": "object", "default": {"x-mcp-header": "x"}}
            }
        });
        assert_eq!(check(schema), Ok(()));
    }

    #[test]
    fn annotations_stay_on_their_fields_in_the_portable_and_grouped_schemas() {
        use crate::model::definition::ToolDefinition;
        use crate::model::schema::fixtures::{action, billing};
        use crate::model::schema::{InputSchemas, input_schema};

        let region =
            |doc: &str| json!({"type": "string", "x-mcp-header": "Region", "description": doc});
        let deploy = |name: &str, doc: &str| {
            action(
                name,
                json!({
                    "type": "object",
                    "properties": {"region": region(doc), "zone": {"$ref": "#/$defs/Zone"}},
                    "$defs": {"Zone": {"type": ["integer", "null"], "x-mcp-header": "Zone"}}
                }),
            )
        };
        let single = ToolDefinition {
            discriminator: None,
            actions: vec![deploy("deploy", "Where.")],
            ..billing()
        };
        let portable = input_schema(&single, InputSchemas::Portable);
        assert_eq!(portable["properties"]["region"]["x-mcp-header"], "Region");
        // Inlined from `$defs` and made `nullable`: on the path, of one type.
        assert_eq!(
            portable["properties"]["zone"],
            json!({"type": "integer", "nullable": true, "x-mcp-header": "Zone"})
        );
        assert_eq!(check_headers(&portable), Ok(()));
        // As written, the `$defs` one is off the path.
        assert!(check_headers(&input_schema(&single, InputSchemas::AsWritten)).is_err());

        // Two actions describing the field differently: one field, its header on it.
        let mut grouped = billing();
        grouped.actions = vec![deploy("deploy", "Where."), deploy("move", "To where.")];
        for form in [InputSchemas::Portable, InputSchemas::AsWritten] {
            let schema = input_schema(&grouped, form);
            let field = &schema["properties"]["region"];
            assert_eq!(
                (&field["type"], &field["x-mcp-header"]),
                (&json!("string"), &json!("Region"))
            );
            assert_eq!(field["anyOf"].as_array().map(Vec::len), Some(2), "{field}");
        }
        assert_eq!(
            check_headers(&input_schema(&grouped, InputSchemas::Portable)),
            Ok(())
        );

        // Sent in two different headers: refused, not published under one of them.
        grouped.actions[1].input_schema["properties"]["region"]["x-mcp-header"] = json!("Area");
        let schema = input_schema(&grouped, InputSchemas::Portable);
        assert!(
            check_headers(&schema)
                .unwrap_err()
                .contains("declare it alike")
        );
    }

    #[test]
    fn every_rule_is_checked_and_named() {
        let one = |property: Value| {
            check(json!({"type": "object", "properties": {"region": property}})).unwrap_err()
        };
        assert!(one(json!({"type": "string", "x-mcp-header": ""})).contains("not an HTTP header"));
        assert!(
            one(json!({"type": "string", "x-mcp-header": "Re gion"})).contains("`Re gion`"),
            "a space is no tchar"
        );
        assert!(one(json!({"type": "string", "x-mcp-header": 1})).contains("must be a string"));
        assert!(one(json!({"type": "number", "x-mcp-header": "R"})).contains("\"number\""));
        assert!(one(json!({"type": ["string", "null"], "x-mcp-header": "R"})).contains("`Option`"));
        let duplicate = check(json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "REGION"}
        }}));
        assert!(duplicate.unwrap_err().contains("is also the header of"));
        for off_path in [
            json!({"type": "object", "x-mcp-header": "Root"}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
                   "$defs": {"A": {"type": "object", "properties": {
                       "r": {"type": "string", "x-mcp-header": "R"}}}}}),
            json!({"type": "object", "properties": {"a": {"anyOf": [
                {"type": "string", "x-mcp-header": "R"}, {"type": "integer"}]}}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items":
                {"type": "string", "x-mcp-header": "R"}}}}),
        ] {
            let error = check(off_path.clone()).unwrap_err();
            assert!(error.contains("`properties` alone"), "{off_path}: {error}");
        }
    }
}
