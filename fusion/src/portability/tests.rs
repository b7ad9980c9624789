//! One test per rule: a definition that breaks it is reported, at the right place, and one
//! that keeps it is not.

use serde_json::{Value, json};

use super::*;

fn tool(name: &str, schema: Value) -> rmcp::model::Tool {
    rmcp::model::Tool::new(
        name.to_owned(),
        "A tool.",
        schema.as_object().expect("an object schema").clone(),
    )
}

/// The `(path, rule)` of every issue `provider` finds in a tool named `ok` with `schema`.
fn issues(schema: Value, provider: Provider) -> Vec<(String, Rule)> {
    check_tool(&tool("ok", schema), provider)
        .into_iter()
        .map(|issue| (issue.path, issue.rule))
        .collect()
}

fn one(path: &str, rule: Rule) -> Vec<(String, Rule)> {
    vec![(path.to_owned(), rule)]
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

#[test]
fn a_portable_schema_passes_the_default_providers() {
    for provider in Provider::DEFAULT {
        assert_eq!(issues(portable(), provider), [], "{provider}");
    }
}

#[test]
fn tool_names() {
    for provider in [Provider::Anthropic, Provider::OpenAi, Provider::Gemini] {
        let long = "a".repeat(65);
        for bad in ["billing:list", "", "with space", long.as_str()] {
            let found = check_tool(
                &tool(bad, json!({"type": "object", "properties": {}})),
                provider,
            );
            assert_eq!(found.len(), 1, "{provider} {bad:?}");
            assert_eq!(
                (found[0].path.as_str(), found[0].rule),
                ("/name", Rule::ToolName)
            );
        }
        let ok = "a".repeat(64);
        assert!(
            check_tool(
                &tool(&ok, json!({"type": "object", "properties": {}})),
                provider
            )
            .is_empty()
        );
    }
    // Gemini: a letter or `_` first; dots allowed.
    let empty = json!({"type": "object", "properties": {}});
    assert!(check_tool(&tool("2fa", empty.clone()), Provider::Anthropic).is_empty());
    assert_eq!(
        check_tool(&tool("2fa", empty.clone()), Provider::Gemini)[0].rule,
        Rule::ToolName
    );
    assert!(check_tool(&tool("billing.list", empty.clone()), Provider::Gemini).is_empty());
}

#[test]
fn the_root_must_be_an_object() {
    for provider in [
        Provider::Anthropic,
        Provider::OpenAi,
        Provider::OpenAiStrict,
        Provider::Gemini,
    ] {
        let found = issues(
            json!({"type": "array", "properties": {}, "additionalProperties": false}),
            provider,
        );
        assert!(
            found.contains(&("/inputSchema/type".into(), Rule::RootType)),
            "{provider}: {found:?}"
        );
    }
}

#[test]
fn no_combinator_at_the_root() {
    let schema = json!({"type": "object", "properties": {}, "anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
    assert!(
        issues(schema.clone(), Provider::Anthropic)
            .contains(&("/inputSchema/anyOf".into(), Rule::RootCombinator))
    );
    assert!(
        issues(schema, Provider::OpenAi)
            .contains(&("/inputSchema/anyOf".into(), Rule::RootCombinator))
    );
    // OpenAI also refuses `enum` and `not`; Anthropic says nothing of them.
    let not = json!({"type": "object", "properties": {}, "not": {"required": ["a"]}});
    assert_eq!(
        issues(not.clone(), Provider::OpenAi),
        one("/inputSchema/not", Rule::RootCombinator)
    );
    assert_eq!(issues(not, Provider::Anthropic), []);
}

#[test]
fn openai_wants_root_properties() {
    assert_eq!(
        issues(json!({"type": "object"}), Provider::OpenAi),
        one("/inputSchema", Rule::RootProperties)
    );
    assert_eq!(issues(json!({"type": "object"}), Provider::Anthropic), []);
}

#[test]
fn references_must_resolve_and_gemini_takes_none() {
    let resolved = json!({
        "type": "object",
        "properties": {"address": {"$ref": "#/$defs/Address"}, "self": {"$ref": "#"}},
        "$defs": {"Address": {"type": "object", "properties": {}}}
    });
    assert_eq!(issues(resolved.clone(), Provider::Anthropic), []);
    assert_eq!(issues(resolved.clone(), Provider::OpenAi), []);
    let gemini = issues(resolved, Provider::Gemini);
    assert!(
        gemini.contains(&(
            "/inputSchema/properties/address/$ref".into(),
            Rule::Reference
        )),
        "{gemini:?}"
    );
    assert!(
        gemini.contains(&("/inputSchema/$defs".into(), Rule::Reference)),
        "{gemini:?}"
    );

    let dangling = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Gone"}, "b": {"$ref": "https://example.com/s.json"}}});
    for provider in [Provider::Anthropic, Provider::OpenAi] {
        assert_eq!(
            issues(dangling.clone(), provider),
            [
                (
                    "/inputSchema/properties/a/$ref".to_owned(),
                    Rule::DanglingReference
                ),
                (
                    "/inputSchema/properties/b/$ref".to_owned(),
                    Rule::DanglingReference
                )
            ]
        );
    }
}

#[test]
fn the_message_of_a_reference_names_the_type() {
    let schema = json!({"type": "object", "properties": {"tree": {"$ref": "#/$defs/Node"}}, "$defs": {"Node": {"type": "object", "properties": {}}}});
    let found = check_tool(&tool("plant", schema), Provider::Gemini);
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
fn gemini_keywords() {
    for (keyword, value) in [
        ("oneOf", json!([{"type": "string"}, {"type": "integer"}])),
        ("allOf", json!([{"type": "string"}])),
        ("const", json!("a")),
        ("additionalProperties", json!(false)),
        ("uniqueItems", json!(true)),
        ("exclusiveMinimum", json!(0)),
    ] {
        let schema = json!({"type": "object", "properties": {"f": {keyword: value}}});
        assert_eq!(
            issues(schema.clone(), Provider::Gemini),
            one(
                &format!("/inputSchema/properties/f/{keyword}"),
                Rule::Keyword
            ),
            "{keyword}"
        );
        assert_eq!(issues(schema, Provider::Anthropic), [], "{keyword}");
    }
}

#[test]
fn gemini_types_formats_and_enums() {
    let schema = |field: Value| json!({"type": "object", "properties": {"f": field}});
    let gemini = |field: Value| issues(schema(field), Provider::Gemini);
    assert_eq!(
        gemini(json!({"type": ["string", "null"]})),
        one("/inputSchema/properties/f/type", Rule::Type)
    );
    assert_eq!(
        gemini(json!({"type": "null"})),
        one("/inputSchema/properties/f/type", Rule::Type)
    );
    assert_eq!(
        gemini(json!({"type": "integer", "format": "uint64"})),
        one("/inputSchema/properties/f/format", Rule::Format)
    );
    assert_eq!(
        gemini(json!({"type": "string", "format": "uuid"})),
        one("/inputSchema/properties/f/format", Rule::Format)
    );
    assert_eq!(gemini(json!({"type": "string", "format": "date-time"})), []);
    assert_eq!(gemini(json!({"type": "number", "format": "double"})), []);
    assert_eq!(
        gemini(json!({"type": "integer", "enum": [1, 2]})),
        one("/inputSchema/properties/f/enum", Rule::EnumValue)
    );
    // Type arrays are fine elsewhere.
    assert_eq!(
        issues(
            schema(json!({"type": ["string", "null"]})),
            Provider::OpenAi
        ),
        []
    );
}

#[test]
fn gemini_parameter_names() {
    let schema = json!({"type": "object", "properties": {"first-name": {"type": "string"}, "_ok1": {"type": "string"}, "1st": {"type": "string"}}});
    assert_eq!(
        issues(schema.clone(), Provider::Gemini),
        [
            (
                "/inputSchema/properties/1st".to_owned(),
                Rule::ParameterName
            ),
            (
                "/inputSchema/properties/first-name".to_owned(),
                Rule::ParameterName
            )
        ]
    );
    assert_eq!(issues(schema, Provider::Anthropic), []);
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
    assert_eq!(issues(strict, Provider::OpenAiStrict), []);
    // What fusion emits for Gemini is not strict: open objects, optional fields, `nullable`.
    let found = issues(portable(), Provider::OpenAiStrict);
    assert!(
        found.contains(&("/inputSchema/additionalProperties".into(), Rule::OpenObject)),
        "{found:?}"
    );
    assert!(
        found.contains(&("/inputSchema/properties/id".into(), Rule::OptionalProperty)),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "/inputSchema/properties/limit/nullable".into(),
            Rule::Keyword
        )),
        "{found:?}"
    );
    // A format on an integer is not one strict mode checks (it checks string formats).
    assert!(
        !found
            .iter()
            .any(|(path, _)| path == "/inputSchema/properties/limit/format"),
        "{found:?}"
    );
}

#[test]
fn strict_mode_keywords_and_formats() {
    let schema = |field: Value| json!({"type": "object", "properties": {"f": field}, "required": ["f"], "additionalProperties": false});
    let strict = |field: Value| issues(schema(field), Provider::OpenAiStrict);
    assert_eq!(
        strict(json!({"type": "string", "minLength": 1})),
        one("/inputSchema/properties/f/minLength", Rule::Keyword)
    );
    assert_eq!(
        strict(json!({"type": "string", "default": "a"})),
        one("/inputSchema/properties/f/default", Rule::Keyword)
    );
    assert_eq!(
        strict(json!({"allOf": [{"type": "string"}]})),
        one("/inputSchema/properties/f/allOf", Rule::Keyword)
    );
    assert_eq!(
        strict(json!({"type": "string", "format": "uri"})),
        one("/inputSchema/properties/f/format", Rule::Format)
    );
    assert_eq!(
        strict(json!({"anyOf": [{"type": "string"}, {"type": "null"}]})),
        []
    );
}

#[test]
fn strict_mode_limits() {
    // Eleven objects deep.
    let mut field = json!({"type": "string"});
    for _ in 0..10 {
        field = json!({"type": "object", "properties": {"f": field}, "required": ["f"], "additionalProperties": false});
    }
    let deep = json!({"type": "object", "properties": {"f": field}, "required": ["f"], "additionalProperties": false});
    assert_eq!(
        issues(deep, Provider::OpenAiStrict),
        one("/inputSchema", Rule::Limit)
    );

    let values: Vec<String> = (0..1001).map(|i| format!("v{i}")).collect();
    let many = json!({"type": "object", "properties": {"f": {"type": "string", "enum": values}}, "required": ["f"], "additionalProperties": false});
    assert_eq!(
        issues(many.clone(), Provider::OpenAiStrict),
        one("/inputSchema", Rule::Limit)
    );
    assert_eq!(issues(many, Provider::OpenAi), []);
}

#[test]
fn check_tools_reports_every_tool_for_every_provider() {
    let tools = [
        tool("a.b", json!({"type": "object", "properties": {}})),
        tool("fine", portable()),
    ];
    let found = check_tools(&tools, &Provider::DEFAULT);
    let providers: Vec<Provider> = found.iter().map(|i| i.provider).collect();
    assert_eq!(providers, [Provider::Anthropic, Provider::OpenAi]);
    assert!(report(&found).starts_with(
        "2 tool definition problems for LLM providers:\n  - Anthropic: tool `a.b` at /name: "
    ));
}
