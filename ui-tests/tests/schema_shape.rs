//! The flat input schema of tools declared with `#[fusion::tool]`: one object,
//! never a top-level `oneOf`/`anyOf`/`allOf`, the discriminator as an `enum` of the actions in
//! declaration order, `required: ["action"]`.

#![allow(
    dead_code,
    reason = "the arguments types exist for their schemas; the actions never read them"
)]

use fusion::Tool;
use fusion::schema::flat_input_schema;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The top-level keywords LLM APIs reject.
const COMBINATORS: [&str; 3] = ["oneOf", "anyOf", "allOf"];

fn flat(tool: &impl Tool) -> Map<String, Value> {
    flat_input_schema(&tool.definition())
}

/// The shape every flat schema has, whatever the tool.
fn assert_flat_object(schema: &Map<String, Value>) {
    assert_eq!(schema["type"], "object", "{schema:#?}");
    for keyword in COMBINATORS {
        assert!(
            !schema.contains_key(keyword),
            "top-level `{keyword}` in {schema:#?}"
        );
    }
    assert!(schema["properties"].is_object(), "{schema:#?}");
}

/// The shape of a multi-action tool's flat schema, with the actions in order.
fn assert_discriminated(schema: &Map<String, Value>, discriminator: &str, actions: &[&str]) {
    assert_flat_object(schema);
    assert_eq!(schema["required"], json!([discriminator]));
    let field = &schema["properties"][discriminator];
    assert_eq!(field["type"], "string");
    assert_eq!(field["enum"], json!(actions));
}

// --- a shop: overlapping fields, nested types ------------------------------------------------

struct Shop;

#[derive(Deserialize, JsonSchema)]
struct Search {
    /// Free text.
    query: String,
    filter: Option<Filter>,
}

#[derive(Deserialize, JsonSchema)]
struct Filter {
    price: PriceRange,
    in_stock: bool,
}

#[derive(Deserialize, JsonSchema)]
struct PriceRange {
    min: u32,
    max: u32,
}

#[derive(Deserialize, JsonSchema)]
struct GetProduct {
    /// The product ID.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct PlaceOrder {
    /// The product to order.
    id: String,
    quantity: u32,
    address: Address,
}

#[derive(Deserialize, JsonSchema)]
struct Address {
    street: String,
    zip: String,
}

#[derive(Deserialize, JsonSchema)]
struct CancelOrder {
    /// Order numbers are numbers here.
    id: u64,
}

/// A shop.
#[fusion::tool]
impl Shop {
    /// Searches the catalogue.
    #[action(read_only)]
    fn search(&self, _args: Search) {}

    /// One product.
    #[action(read_only)]
    fn get_product(&self, _args: GetProduct) {}

    /// Orders a product.
    #[action]
    fn place_order(&self, _args: PlaceOrder) {}

    /// Cancels an order.
    #[action(name = "cancel")]
    fn cancel_order(&self, _args: CancelOrder) {}

    /// Takes no arguments.
    #[action]
    fn ping(&self) {}
}

#[test]
fn a_multi_action_schema_is_one_flat_object() {
    let schema = flat(&Shop);
    assert_discriminated(
        &schema,
        "action",
        &["search", "get_product", "place_order", "cancel", "ping"],
    );
    let properties = schema["properties"].as_object().unwrap();
    let fields: Vec<&str> = properties.keys().map(String::as_str).collect();
    for field in ["action", "query", "filter", "id", "quantity", "address"] {
        assert!(fields.contains(&field), "no `{field}` in {fields:?}");
    }
}

#[test]
fn the_discriminator_describes_each_action() {
    let schema = flat(&Shop);
    let description = schema["properties"]["action"]["description"]
        .as_str()
        .unwrap();
    assert!(
        description.contains("'search': Searches the catalogue."),
        "{description}"
    );
    assert!(
        description.contains("'ping': Takes no arguments."),
        "{description}"
    );
}

#[test]
fn an_overlapping_field_says_which_actions_use_it() {
    let schema = flat(&Shop);
    let id = &schema["properties"]["id"];
    let description = id["description"].as_str().unwrap();
    assert!(
        description.contains("get_product (required), place_order (required), cancel (required)"),
        "{description}"
    );
    // Different types in different actions: either is accepted, one level down.
    assert!(id["anyOf"].is_array(), "{id:#}");
}

#[test]
fn nested_types_are_inlined() {
    let schema = flat(&Shop);
    assert!(!schema.contains_key("$defs"), "{schema:#?}");
    let text = serde_json::to_string(&schema).unwrap();
    assert!(!text.contains("$ref"), "{text}");
    // `Option<Filter>`: the definition in place, `null` as `nullable`.
    let filter = &schema["properties"]["filter"];
    assert_eq!(filter["type"], "object", "{filter:#}");
    assert_eq!(filter["nullable"], true, "{filter:#}");
    assert_eq!(
        filter["properties"]["price"]["properties"]["min"],
        // schemars' `format: "uint32"` is none Gemini knows; the minimum says it.
        json!({"type": "integer", "minimum": 0}),
        "{filter:#}"
    );
    assert_eq!(
        schema["properties"]["address"]["required"],
        json!(["street", "zip"])
    );
}

// --- a custom discriminator --------------------------------------------------------------------

struct Queue;

/// A job queue.
#[fusion::tool(discriminator = "op")]
impl Queue {
    /// Adds a job.
    #[action]
    fn push(&self, _args: GetProduct) {}

    /// Takes the next job.
    #[action]
    fn pop(&self) {}
}

#[test]
fn a_custom_discriminator_is_the_one_required_field() {
    let schema = flat(&Queue);
    assert_discriminated(&schema, "op", &["push", "pop"]);
    assert!(
        !schema["properties"]
            .as_object()
            .unwrap()
            .contains_key("action")
    );
}

// --- a function tool ---------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct ConvertArgs {
    /// The amount, in cents.
    amount: u64,
    from: Currency,
    to: Currency,
}

#[derive(Deserialize, JsonSchema)]
enum Currency {
    #[serde(rename = "EUR")]
    Euro,
    #[serde(rename = "USD")]
    Dollar,
}

/// Converts between currencies.
#[fusion::tool]
fn convert(_args: ConvertArgs) -> u64 {
    0
}

#[test]
fn a_function_tool_schema_is_its_arguments_object() {
    let schema = flat(&Convert);
    assert_flat_object(&schema);
    assert_eq!(schema["required"], json!(["amount", "from", "to"]));
    assert!(
        !schema["properties"]
            .as_object()
            .unwrap()
            .contains_key("action")
    );
    assert!(!schema.contains_key("$schema"));
    // A unit enum: a string `enum`, inlined.
    assert_eq!(
        schema["properties"]["from"],
        json!({"type": "string", "enum": ["EUR", "USD"]})
    );
    assert!(!schema.contains_key("$defs"));
}
