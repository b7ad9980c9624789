//! Each rule: a definition that breaks it is reported, at the right place, and one that keeps
//! it is not.

use serde_json::{Value, json};

use super::*;

fn tool(name: &str, schema: &Value) -> rmcp::model::Tool {
    rmcp::model::Tool::new(
        name.to_owned(),
        "A tool.",
        schema.as_object().expect("an object schema").clone(),
    )
}

/// The `(path, rule)` of every issue `provider` finds in a tool named `name` with `schema`.
fn found(name: &str, schema: &Value, provider: Provider) -> Vec<(String, Rule)> {
    check_tool(&tool(name, schema), provider)
        .into_iter()
        .map(|issue| (issue.path, issue.rule))
        .collect()
}

/// `expected`'s paths, written below `/inputSchema`, in full.
fn in_schema(expected: &[(&str, Rule)]) -> Vec<(String, Rule)> {
    let full = |(path, rule): &(&str, Rule)| (format!("/inputSchema{path}"), *rule);
    expected.iter().map(full).collect()
}

/// Asserts that each of `providers` finds exactly `expected` in a tool with `schema`.
#[track_caller]
fn finds(schema: &Value, providers: &[Provider], expected: &[(&str, Rule)]) {
    for &provider in providers {
        let found = found("ok", schema, provider);
        assert_eq!(found, in_schema(expected), "{provider}: {schema}");
    }
}

/// Asserts that each of `providers` finds `expected`, among other issues, in a tool with `schema`.
#[track_caller]
fn finds_among(schema: &Value, providers: &[Provider], expected: &[(&str, Rule)]) {
    for &provider in providers {
        let found = found("ok", schema, provider);
        for issue in in_schema(expected) {
            assert!(found.contains(&issue), "{provider}: {issue:?} in {found:?}");
        }
    }
}

/// Asserts that `provider` finds in `schema` only `expected`, on a keyword of the field `f`.
#[track_caller]
fn finds_at_f(schema: &Value, provider: Provider, expected: Option<(&str, Rule)>) {
    let path = expected.map(|(keyword, rule)| (format!("/properties/f/{keyword}"), rule));
    let expected = path.as_ref().map(|(path, rule)| (path.as_str(), *rule));
    finds(schema, &[provider], expected.as_slice());
}

/// A schema with the field `f` of schema `field`.
fn field(field: Value) -> Value {
    json!({"type": "object", "properties": {"f": field}})
}

/// A strict-mode schema (closed, `f` required) with the field `f` of schema `field`.
fn strict_field(field: Value) -> Value {
    json!({"type": "object", "properties": {"f": field}, "required": ["f"], "additionalProperties": false})
}

/// A schema fusion emits: all three default providers accept it.
fn portable() -> Value {
    json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "get"], "description": "The action."},
            "id": {"type": "string", "pattern": "^inv_[0-9]{4}$"},
            "limit": {"type": "integer", "format": "int64", "minimum": 0, "nullable": true},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5}
        },
        "required": ["action"]
    })
}

use Provider::{Anthropic, Gemini, OpenAi, OpenAiStrict};
use Rule::{EnumValue, Format, Keyword};

#[test]
fn a_portable_schema_passes_the_default_providers() {
    finds(&portable(), &Provider::DEFAULT, &[]);
}

#[test]
fn tool_names() {
    let empty = json!({"type": "object", "properties": {}});
    let name_issue = [("/name".to_owned(), Rule::ToolName)];
    let long = "a".repeat(65);
    for provider in [Anthropic, OpenAi, Gemini] {
        for bad in ["billing:list", "", "with space", long.as_str()] {
            assert_eq!(
                found(bad, &empty, provider),
                name_issue,
                "{provider} {bad:?}"
            );
        }
        assert_eq!(found(&"a".repeat(64), &empty, provider), [], "{provider}");
    }
    // Gemini: a letter or `_` first; dots allowed.
    assert_eq!(found("2fa", &empty, Anthropic), []);
    assert_eq!(found("2fa", &empty, Gemini), name_issue);
    assert_eq!(found("billing.list", &empty, Gemini), []);
}

#[test]
fn root_rules() {
    let array = json!({"type": "array", "properties": {}, "additionalProperties": false});
    let all = [Anthropic, OpenAi, OpenAiStrict, Gemini];
    finds_among(&array, &all, &[("/type", Rule::RootType)]);
    let any_of = json!({"type": "object", "properties": {}, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
    finds_among(
        &any_of,
        &[Anthropic, OpenAi],
        &[("/anyOf", Rule::RootCombinator)],
    );
    // OpenAI also refuses `enum` and `not`; Anthropic says nothing of them.
    let not = json!({"type": "object", "properties": {}, "not": {"required": ["a"]}});
    finds(&not, &[OpenAi], &[("/not", Rule::RootCombinator)]);
    finds(&not, &[Anthropic], &[]);
    // OpenAI wants root properties.
    let bare = json!({"type": "object"});
    finds(&bare, &[OpenAi], &[("", Rule::RootProperties)]);
    finds(&bare, &[Anthropic], &[]);
}

#[test]
fn references_must_resolve_and_gemini_takes_none() {
    let resolved = json!({
        "type": "object",
        "properties": {"address": {"$ref": "#/$defs/Address"}, "self": {"$ref": "#"}},
        "$defs": {"Address": {"type": "object", "properties": {}}}
    });
    finds(&resolved, &[Anthropic, OpenAi], &[]);
    let gemini = [
        ("/properties/address/$ref", Rule::Reference),
        ("/$defs", Rule::Reference),
    ];
    finds_among(&resolved, &[Gemini], &gemini);
    let dangling = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Gone"}, "b": {"$ref": "https://example.com/s.json"}}});
    let expected = [
        ("/properties/a/$ref", Rule::DanglingReference),
        ("/properties/b/$ref", Rule::DanglingReference),
    ];
    finds(&dangling, &[Anthropic, OpenAi], &expected);
}

#[test]
fn the_message_of_a_reference_names_the_type() {
    let schema = json!({"type": "object", "properties": {"tree": {"$ref": "#/$defs/Node"}}, "$defs": {"Node": {"type": "object", "properties": {}}}});
    let found = check_tool(&tool("plant", &schema), Gemini);
    let text = found
        .iter()
        .find(|issue| issue.path.ends_with("$ref"))
        .expect("the `$ref` reported")
        .to_string();
    assert!(
        text.starts_with("Gemini: tool `plant` at /inputSchema/properties/tree/$ref: "),
        "{text}"
    );
    assert!(text.contains("`Node`"), "{text}");
    assert!(text.contains("non-recursive"), "{text}");
}

#[test]
fn gemini_keywords_types_formats_enums_and_parameter_names() {
    for (keyword, value) in [
        ("oneOf", json!([{"type": "string"}, {"type": "integer"}])),
        ("allOf", json!([{"type": "string"}])),
        ("const", json!("a")),
        ("additionalProperties", json!(false)),
        ("uniqueItems", json!(true)),
        ("exclusiveMinimum", json!(0)),
    ] {
        let schema = field(json!({keyword: value}));
        let path = format!("/properties/f/{keyword}");
        finds(&schema, &[Gemini], &[(&path, Keyword)]);
        finds(&schema, &[Anthropic], &[]);
    }
    for (f, expected) in [
        (
            json!({"type": ["string", "null"]}),
            Some(("type", Rule::Type)),
        ),
        (json!({"type": "null"}), Some(("type", Rule::Type))),
        (
            json!({"type": "integer", "format": "uint64"}),
            Some(("format", Format)),
        ),
        (
            json!({"type": "string", "format": "uuid"}),
            Some(("format", Format)),
        ),
        (json!({"type": "string", "format": "date-time"}), None),
        (json!({"type": "number", "format": "double"}), None),
        (
            json!({"type": "integer", "enum": [1, 2]}),
            Some(("enum", EnumValue)),
        ),
    ] {
        finds_at_f(&field(f), Gemini, expected);
    }
    // Type arrays are fine elsewhere.
    finds(&field(json!({"type": ["string", "null"]})), &[OpenAi], &[]);

    let names = json!({"type": "object", "properties": {"first-name": {"type": "string"}, "_ok1": {"type": "string"}, "1st": {"type": "string"}}});
    let expected = [
        ("/properties/1st", Rule::ParameterName),
        ("/properties/first-name", Rule::ParameterName),
    ];
    finds(&names, &[Gemini], &expected);
    finds(&names, &[Anthropic], &[]);
}

#[test]
fn strict_mode_wants_closed_objects_with_every_property_required() {
    let strict = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "note": {"type": ["string", "null"]},
            "address": {"type": "object", "properties": {"zip": {"type": "string"}}, "required": ["zip"], "additionalProperties": false}
        },
        "required": ["id", "note", "address"],
        "additionalProperties": false
    });
    finds(&strict, &[OpenAiStrict], &[]);
    // What fusion emits for Gemini is not strict: open objects, optional fields, `nullable`.
    let expected = [
        ("/additionalProperties", Rule::OpenObject),
        ("/properties/id", Rule::OptionalProperty),
        ("/properties/limit/nullable", Keyword),
    ];
    finds_among(&portable(), &[OpenAiStrict], &expected);
    // A format on an integer is not one strict mode checks (it checks string formats).
    let found = found("ok", &portable(), OpenAiStrict);
    assert!(
        !found
            .iter()
            .any(|(path, _)| path == "/inputSchema/properties/limit/format"),
        "{found:?}"
    );
}

#[test]
fn strict_mode_keywords_formats_and_limits() {
    for (f, expected) in [
        (
            json!({"type": "string", "minLength": 1}),
            Some(("minLength", Keyword)),
        ),
        (
            json!({"type": "string", "default": "a"}),
            Some(("default", Keyword)),
        ),
        (
            json!({"allOf": [{"type": "string"}]}),
            Some(("allOf", Keyword)),
        ),
        (
            json!({"type": "string", "format": "uri"}),
            Some(("format", Format)),
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            None,
        ),
    ] {
        finds_at_f(&strict_field(f), OpenAiStrict, expected);
    }

    // Eleven objects deep.
    let mut deep = json!({"type": "string"});
    for _ in 0..11 {
        deep = strict_field(deep);
    }
    finds(&deep, &[OpenAiStrict], &[("", Rule::Limit)]);
    let values: Vec<String> = (0..1001).map(|i| format!("v{i}")).collect();
    let many = strict_field(json!({"type": "string", "enum": values}));
    finds(&many, &[OpenAiStrict], &[("", Rule::Limit)]);
    finds(&many, &[OpenAi], &[]);
}

#[test]
fn check_tools_reports_every_tool_for_every_provider() {
    let tools = [
        tool("a.b", &json!({"type": "object", "properties": {}})),
        tool("fine", &portable()),
    ];
    let found = check_tools(&tools, &Provider::DEFAULT);
    let providers: Vec<Provider> = found.iter().map(|i| i.provider).collect();
    assert_eq!(providers, [Anthropic, OpenAi]);
    assert_eq!(found[0].rule.to_string(), "tool name");
    assert_eq!(Rule::DanglingReference.to_string(), "dangling reference");
    assert!(report(&found).starts_with(
        "2 tool definition problems for LLM providers:\n  - Anthropic: tool `a.b` at /name: "
    ));
    // Then who refuses each tool: the price of a schema published as written.
    assert!(
        report(&found).ends_with("\n  tool `a.b` would be refused by Anthropic and OpenAI"),
        "{}",
        report(&found)
    );
    assert_eq!(refusing(&tools[0], &Provider::DEFAULT), [Anthropic, OpenAi]);
    assert!(refusing(&tools[1], &Provider::DEFAULT).is_empty());
    assert_eq!(names(&Provider::DEFAULT), "Anthropic, OpenAI and Gemini");
}
