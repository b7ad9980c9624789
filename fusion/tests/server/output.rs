//! Output schemas on the wire: `#[action(output_schema)]` advertised as `outputSchema` (flat
//! exposition, and grouped when every action declares one), successes carrying `structuredContent`,
//! errors carrying none. Every result is checked the way a strict client checks it (the
//! TypeScript SDK rejects a success of a tool with an output schema that has no conforming
//! `structuredContent`).

use fusion::ToolError;
use fusion::server::{Exposition, Server};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::tools::{Client, call, connect, meta, texts, within};

// --- the tools ------------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Lookup {
    /// The receipt ID, like `r_1`.
    pub(crate) id: String,
}

/// A receipt.
#[derive(Serialize, JsonSchema)]
pub(crate) struct Receipt {
    pub(crate) id: String,
    pub(crate) amount_cents: u64,
    pub(crate) note: Option<String>,
}

fn find(id: &str) -> Result<Receipt, ToolError> {
    match id {
        "r_1" => Ok(Receipt {
            id: id.to_owned(),
            amount_cents: 1200,
            note: None,
        }),
        _ => Err(ToolError::not_found("No receipt with that ID")
            .suggest("List receipt IDs first, then retry with a real one")
            .detail("requestedId", id)),
    }
}

pub(crate) struct Shop;

/// Receipts of the shop.
#[fusion::tool]
impl Shop {
    /// Fetches one receipt.
    #[action(read_only, output_schema)]
    pub(crate) fn receipt(&self, args: Lookup) -> Result<Receipt, ToolError> {
        find(&args.id)
    }

    /// Lists receipt IDs: an array, so no object schema to advertise.
    #[action(output_schema)]
    pub(crate) fn ids(&self) -> Vec<String> {
        vec!["r_1".to_owned()]
    }

    /// Counts receipts; declares no output schema.
    #[action]
    pub(crate) fn count(&self) -> u32 {
        1
    }
}

/// Fetches the receipt of one order.
#[fusion::tool(output_schema)]
pub(crate) fn receipt_of(args: Lookup) -> Result<Receipt, ToolError> {
    find(&args.id)
}

fn shop(exposition: Exposition) -> Server {
    Server::new("shop-server", "1.0.0")
        .tool(Shop)
        .tool(ReceiptOf)
        .exposition(exposition)
}

/// The output schema of `Receipt` as advertised: schemars' serialize contract (`note` is
/// always written, so required), without `$schema` and `title`.
fn receipt_schema() -> Value {
    json!({
        "type": "object",
        "description": "A receipt.",
        "properties": {
            "id": {"type": "string"},
            "amount_cents": {"type": "integer", "format": "uint64", "minimum": 0},
            "note": {"type": ["string", "null"]},
        },
        "required": ["id", "amount_cents", "note"],
    })
}

// --- a strict client ------------------------------------------------------------------------

/// Calls `name` and checks the result as a strict client does against the listed tool: a
/// success of a tool with an `outputSchema` must carry `structuredContent` that conforms to it
/// (MCP specification 2025-06-18, "Tools", "Output Schema"); an error is not checked.
async fn strict_call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    let tools = within(client.list_all_tools()).await.unwrap();
    let tool = tools
        .iter()
        .find(|t| t.name == name)
        .expect("a listed tool");
    let result = call(client, name, arguments).await;
    if let (Some(schema), Some(false)) = (&tool.output_schema, result.is_error) {
        let structured = result
            .structured_content
            .as_ref()
            .unwrap_or_else(|| panic!("{name}: a success without structuredContent"));
        let schema = Value::Object((**schema).clone());
        let validator = jsonschema::options().offline().build(&schema).unwrap();
        assert!(
            validator.is_valid(structured),
            "{name}: {structured} does not conform to {schema}"
        );
    }
    result
}

/// The single text block of a success parsed as JSON, after checking it is the same JSON as
/// `structuredContent`.
fn same_json(result: &CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let [text] = texts(result)[..] else {
        panic!("one text block: {result:?}")
    };
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    assert_eq!(text, structured.to_string());
    structured
}

// --- tools/list -----------------------------------------------------------------------------

#[tokio::test]
async fn flat_tools_advertise_each_actions_output_schema() {
    let client = connect(shop(Exposition::Flat)).await;
    let tools = within(client.list_all_tools()).await.unwrap();
    let schemas: Vec<(&str, Option<Value>)> = tools
        .iter()
        .map(|t| {
            let schema = t
                .output_schema
                .as_ref()
                .map(|s| Value::Object((**s).clone()));
            (t.name.as_ref(), schema)
        })
        .collect();
    assert_eq!(
        schemas,
        [
            ("shop_receipt", Some(receipt_schema())),
            // Not an object schema: never advertised (a warning is logged at registration).
            ("shop_ids", None),
            ("shop_count", None),
            ("receipt_of", Some(receipt_schema())),
        ]
    );
    // The wire form uses the MCP name.
    let wire = serde_json::to_value(&tools[0]).unwrap();
    assert_eq!(wire["outputSchema"], receipt_schema());
    assert!(
        serde_json::to_value(&tools[2])
            .unwrap()
            .get("outputSchema")
            .is_none()
    );
}

#[tokio::test]
async fn grouped_tools_advertise_an_output_schema_only_when_every_action_declares_one() {
    let client = connect(shop(Exposition::Grouped)).await;
    let tools = within(client.list_all_tools()).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["shop", "receipt_of"]);
    // `count` declares none: its successes carry no `structuredContent`, so no schema.
    assert_eq!(tools[0].output_schema, None);
    let single = tools[1].output_schema.as_deref().expect("outputSchema");
    assert_eq!(Value::Object(single.clone()), receipt_schema());
}

/// Two actions returning one type: the grouped tool advertises that type's schema.
pub(crate) struct Till;

/// The till of the shop.
#[fusion::tool]
impl Till {
    /// Fetches one receipt.
    #[action(read_only, output_schema)]
    pub(crate) fn receipt(&self, args: Lookup) -> Result<Receipt, ToolError> {
        find(&args.id)
    }

    /// The latest receipt.
    #[action(read_only, output_schema)]
    pub(crate) fn latest(&self) -> Result<Receipt, ToolError> {
        find("r_1")
    }
}

#[tokio::test]
async fn a_grouped_tool_whose_actions_return_one_type_advertises_its_schema() {
    let client = connect(Server::new("till-server", "1.0.0").tool(Till)).await;
    let tools = within(client.list_all_tools()).await.unwrap();
    let schema = tools[0].output_schema.as_deref().expect("outputSchema");
    assert_eq!(Value::Object(schema.clone()), receipt_schema());
    // Every success of either action conforms, as a strict client checks.
    for arguments in [
        json!({"action": "receipt", "id": "r_1"}),
        json!({"action": "latest"}),
    ] {
        let result = strict_call(&client, "till", arguments).await;
        assert_eq!(result.is_error, Some(false), "{result:?}");
    }
    let missing = strict_call(&client, "till", json!({"action": "receipt", "id": "r_9"})).await;
    assert_eq!(missing.is_error, Some(true));
}

// --- tools/call -----------------------------------------------------------------------------

#[tokio::test]
async fn a_success_carries_the_value_as_structured_content_and_as_text() {
    let expected = json!({"id": "r_1", "amount_cents": 1200, "note": null});
    for (exposition, name, arguments) in [
        (Exposition::Flat, "shop_receipt", json!({"id": "r_1"})),
        (Exposition::Flat, "receipt_of", json!({"id": "r_1"})),
        (Exposition::Grouped, "receipt_of", json!({"id": "r_1"})),
        // Grouped `shop` advertises no schema, yet its action still answers structured.
        (
            Exposition::Grouped,
            "shop",
            json!({"action": "receipt", "id": "r_1"}),
        ),
    ] {
        let client = connect(shop(exposition)).await;
        let result = strict_call(&client, name, arguments).await;
        assert_eq!(same_json(&result), expected, "{name}");
        assert!(result.meta.is_none(), "{name}");
    }
}

#[tokio::test]
async fn actions_without_an_object_schema_answer_text_only() {
    let client = connect(shop(Exposition::Flat)).await;
    let ids = strict_call(&client, "shop_ids", json!({})).await;
    assert_eq!(texts(&ids), [r#"["r_1"]"#]);
    assert_eq!(ids.structured_content, None);
    let count = strict_call(&client, "shop_count", json!({})).await;
    assert_eq!(texts(&count), ["1"]);
    assert_eq!(count.structured_content, None);
}

#[tokio::test]
async fn errors_of_an_output_schema_action_carry_no_structured_content() {
    for (exposition, name, arguments) in [
        (Exposition::Flat, "shop_receipt", json!({"id": "r_404"})),
        (Exposition::Grouped, "receipt_of", json!({"id": "r_404"})),
    ] {
        let client = connect(shop(exposition)).await;
        // The rmcp client accepts the result, and a strict client does not check it.
        let not_found = strict_call(&client, name, arguments).await;
        assert_eq!(not_found.is_error, Some(true));
        assert!(texts(&not_found)[0].starts_with("<tool_error code=\"NOT_FOUND\""));
        assert_eq!(meta(&not_found)["fusion/error"]["code"], "NOT_FOUND");
        assert_eq!(not_found.structured_content, None, "{name}");

        let invalid = strict_call(&client, name, json!({"id": 7})).await;
        assert_eq!(invalid.is_error, Some(true));
        assert!(texts(&invalid)[0].starts_with("<validation_error"));
        assert_eq!(invalid.structured_content, None, "{name}");
    }
}

#[tokio::test]
async fn only_the_opt_in_flags_reach_structured_content_on_an_error() {
    let client = connect(shop(Exposition::Flat).flags_in_structured_content(true)).await;
    let not_found = strict_call(&client, "shop_receipt", json!({"id": "r_404"})).await;
    assert_eq!(
        not_found.structured_content.as_ref(),
        Some(&meta(&not_found)["fusion/error"])
    );
    // A success still carries the value, not flags.
    let found = strict_call(&client, "shop_receipt", json!({"id": "r_1"})).await;
    assert_eq!(same_json(&found)["id"], "r_1");
}
