//! Tool definitions every default LLM provider accepts: what a server refuses at registration,
//! and that the rewrite of the advertised schema never loosens validation.

use fusion::portability::Provider;
use fusion::server::Server;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::tools::{builder_panic, call, connect, texts};

/// A tree: its schema refers to itself, which no inlining can remove.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Node {
    /// The node's label.
    pub(crate) label: String,
    pub(crate) children: Vec<Node>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlantArgs {
    pub(crate) tree: Node,
}

/// Plants a tree.
#[fusion::tool]
#[action(idempotent)]
pub(crate) fn plant(args: PlantArgs) -> usize {
    args.tree.label.len() + args.tree.children.len()
}

#[test]
fn a_recursive_arguments_type_is_refused_naming_the_type() {
    let message = builder_panic(|| Server::new("s", "1").tool(Plant)).unwrap();
    assert!(
        message
            .starts_with("fusion::server::Server: 3 tool definition problems for LLM providers:"),
        "{message}"
    );
    assert!(
        message.contains(
            "Gemini: tool `plant` at /inputSchema/properties/tree/properties/children/items/$ref: \
             the Gemini API resolves no `$ref` (here to `Node`)"
        ),
        "{message}"
    );
    assert!(
        message.contains("`Server::portable_to`, called before the `.tool(..)` calls"),
        "{message}"
    );
}

#[tokio::test]
async fn without_gemini_a_recursive_type_is_served_and_validated_as_declared() {
    let server = Server::new("s", "1")
        .portable_to([Provider::Anthropic, Provider::OpenAi])
        .tool(Plant);
    let schema = Value::Object((*server.tool_definitions()[0].input_schema).clone());
    // The cycle stays a reference; everything else is inlined.
    assert_eq!(
        schema["properties"]["tree"]["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Node"})
    );
    assert!(schema["$defs"]["Node"].is_object(), "{schema:#}");
    assert!(schema.get("additionalProperties").is_none(), "{schema:#}");

    let client = connect(server).await;
    let tree = json!({"label": "a", "children": [{"label": "b", "children": []}]});
    let ok = call(&client, "plant", json!({"tree": tree})).await;
    assert_eq!(ok.is_error, Some(false), "{:?}", texts(&ok));
    // Not advertised, still refused: the field `deny_unknown_fields` rejects, and a nested
    // node missing a field of the recursive type.
    let extra = call(&client, "plant", json!({"tree": tree, "extra": 1})).await;
    assert_eq!(extra.is_error, Some(true));
    assert!(
        texts(&extra)[0].contains("<field name=\"extra\">"),
        "{:?}",
        texts(&extra)
    );
    let deep = json!({"tree": {"label": "a", "children": [{"label": "b"}]}});
    let missing = call(&client, "plant", deep).await;
    assert_eq!(missing.is_error, Some(true));
    assert!(
        texts(&missing)[0].contains("tree.children[0].children"),
        "{:?}",
        texts(&missing)
    );
}

#[test]
fn no_provider_checks_nothing() {
    let server = Server::new("s", "1").portable_to([]).tool(Plant);
    assert_eq!(server.tool_definitions().len(), 1);
}

// A generic type named after its parameter: its definition is `Page<Entry>`, which a reference
// writes percent-encoded (`#/$defs/Page%3CEntry%3E`).
#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "Page<{T}>")]
pub(crate) struct Page<T> {
    pub(crate) items: Vec<T>,
    pub(crate) next: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Entry {
    pub(crate) title: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ImportArgs {
    pub(crate) first: Page<Entry>,
    pub(crate) second: Page<Entry>,
}

/// Imports pages of entries.
#[fusion::tool]
pub(crate) fn import(args: ImportArgs) -> usize {
    let pages = [args.first, args.second];
    let titled = pages.iter().flat_map(|page| &page.items);
    titled.filter(|entry| !entry.title.is_empty()).count()
        + pages.iter().filter(|page| page.next.is_some()).count()
}

#[tokio::test]
async fn a_generic_type_behind_a_percent_encoded_reference_is_inlined_for_every_provider() {
    let written = serde_json::to_string(&schemars::schema_for!(ImportArgs)).unwrap();
    assert!(written.contains("%3C"), "schemars writes: {written}");
    let server = Server::new("s", "1").tool(Import);
    let advertised = Value::Object((*server.tool_definitions()[0].input_schema).clone());
    let advertised_text = advertised.to_string();
    assert!(!advertised_text.contains("\"$ref\""), "{advertised_text}");
    assert_eq!(
        advertised["properties"]["first"]["properties"]["items"]["items"]["properties"]["title"]["type"],
        "string",
        "{advertised_text}"
    );
    let client = connect(server).await;
    let page = json!({"items": [{"title": "a"}], "next": null});
    let ok = call(&client, "import", json!({"first": page, "second": page})).await;
    assert_eq!(texts(&ok), ["2"]);
    let wrong = json!({"items": [{"title": 1}], "next": null});
    let refused = call(&client, "import", json!({"first": page, "second": wrong})).await;
    assert_eq!(refused.is_error, Some(true));
    let envelope = texts(&refused).join("");
    assert!(
        envelope.contains("<field name=\"second.items[0].title\">Wrong type."),
        "{envelope}"
    );
}

/// The panic message of registering a single-function tool with `schema` under `providers`,
/// or `None` when it registers.
fn refusal(schema: Value, providers: &[Provider]) -> Option<String> {
    let tool = super::tools::Named::with_schema("lookup", schema);
    builder_panic(|| {
        Server::new("s", "1")
            .portable_to(providers.iter().copied())
            .tool(tool)
    })
}

#[test]
fn a_reference_that_designates_nothing_is_refused_at_registration_whatever_the_providers() {
    let with = |reference: &str, name: &str| {
        json!({
            "type": "object",
            "properties": {"first": {"$ref": reference}},
            "$defs": {name: {"type": "object", "properties": {"n": {"type": "integer"}}}}
        })
    };
    // Designates `$defs` → `a` → `b` (a `%2F` decodes to a step, RFC 6901 section 6); an
    // escape that is not two hex digits; bytes that are not UTF-8.
    let broken = [
        ("#/$defs/a%2Fb", "a/b"),
        ("#/$defs/x%+1", "x\u{1}"),
        ("#/$defs/a%FFb", "a\u{FFFD}b"),
        ("#/$defs/Missing", "Present"),
    ];
    for (reference, name) in broken {
        for providers in [&Provider::DEFAULT[..], &[]] {
            let refused = refusal(with(reference, name), providers);
            let message = refused.unwrap_or_else(|| panic!("{reference} registered"));
            assert!(message.contains("`lookup`"), "{reference}: {message}");
        }
    }
    // Escaped as RFC 6901 says: `~1` is a `/` inside the name, `%7E1` too once decoded.
    for reference in ["#/$defs/a~1b", "#/$defs/a%7E1b"] {
        assert_eq!(refusal(with(reference, "a/b"), &Provider::DEFAULT), None);
    }
}
