//! The `fusion-billing` binary (the billing example) launched as a child process and driven
//! over stdio by rmcp's client, the way MCP clients run local servers.

use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::process::Command;

#[path = "support/within.rs"]
mod within;
use within::within;

#[path = "support/launch.rs"]
mod launch;
use launch::launch;

const BINARY: &str = env!("CARGO_BIN_EXE_fusion-billing");

type Client = RunningService<RoleClient, ClientConfig>;

fn client_config() -> ClientConfig {
    let mut config = ClientConfig::default();
    config.client_info = Implementation::new("billing-stdio-test", "0.0.1");
    config
}

async fn call(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    within(client.call_tool(params))
        .await
        .expect("a tool result")
}

fn texts(result: &CallToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .map(|block| block.as_text().expect("a text block").text.as_str())
        .collect()
}

fn flags(result: &CallToolResult) -> Value {
    let meta = result.meta.as_ref().expect("_meta on the result");
    meta.0["fusion/error"].clone()
}

#[tokio::test]
async fn initialize_and_tools_list_describe_the_billing_tool() {
    let client = launch(BINARY, &[], client_config()).await;
    let info = client.peer_info().expect("the initialize result");
    let server = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server.name, "fusion-billing");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));

    let tools = within(client.list_all_tools()).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["billing", "ledger"]);
    let billing = &tools[0];
    assert!(
        billing.output_schema.is_none(),
        "a multi-action tool has none"
    );
    let schema = &*billing.input_schema;
    assert_eq!(schema["required"], json!(["action"]));
    assert_eq!(
        schema["properties"]["action"]["enum"],
        json!([
            "list_invoices",
            "get_invoice",
            "charge",
            "refund",
            "export_invoices"
        ])
    );
    for combinator in ["oneOf", "anyOf", "allOf"] {
        assert!(!schema.contains_key(combinator), "top-level {combinator}");
    }
    // The one action that may run as a task, and the extension the server declares for it.
    assert_eq!(
        billing.meta.as_ref().expect("_meta").0["fusion/tasks"],
        json!(["export_invoices"])
    );
    assert!(info.capabilities.supports_tasks());
    let contracts = &billing.meta.as_ref().expect("_meta").0["fusion/errors"];
    assert!(
        contracts.as_array().unwrap().contains(&json!({
            "action": "get_invoice", "code": "NOT_FOUND", "severity": "error",
            "category": "not_found", "retryable": false,
        })),
        "{contracts}"
    );
    within(client.cancel()).await.unwrap();
}

#[tokio::test]
async fn calls_answer_payloads_and_byte_exact_envelopes() {
    let client = launch(BINARY, &[], client_config()).await;

    let good = call(
        &client,
        "billing",
        json!({"action": "get_invoice", "id": "inv_0001"}),
    )
    .await;
    assert_eq!(
        texts(&good),
        [r#"{"id":"inv_0001","amount_cents":12000,"currency":"EUR","status":"open"}"#]
    );
    assert_eq!(good.is_error, Some(false));
    assert!(good.meta.is_none());

    let missing = call(
        &client,
        "billing",
        json!({"action": "get_invoice", "id": "inv_2026"}),
    )
    .await;
    assert_eq!(
        texts(&missing),
        ["\
<tool_error code=\"NOT_FOUND\" severity=\"error\">
<message>No invoice with that ID</message>
<recovery>List invoices first, then retry with a real ID</recovery>
<available_actions>
  <action>billing.list_invoices</action>
</available_actions>
<details>
  <detail key=\"requestedId\">inv_2026</detail>
</details>
</tool_error>"]
    );
    assert_eq!(missing.is_error, Some(true));
    assert_eq!(
        flags(&missing),
        json!({
            "isError": true, "errorCategory": "not_found", "isRetryable": false,
            "code": "NOT_FOUND", "severity": "error",
        })
    );

    let invalid = call(
        &client,
        "billing",
        json!({"action": "charge", "invoice_id": "invoice-7", "amount_cents": 0, "currency": "eur"}),
    )
    .await;
    assert_eq!(
        texts(&invalid),
        ["\
<validation_error action=\"billing.charge\">
<field name=\"amount_cents\">Number too small. You sent: 0. Expected a number >= 1.</field>
<field name=\"currency\">Value not allowed. You sent: 'eur'. Expected one of: 'EUR', 'USD'.</field>
<field name=\"invoice_id\">Does not match the required pattern. You sent: 'invoice-7'. Expected text matching the pattern '^inv_[0-9]{4}$'.</field>
<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>
</validation_error>"]
    );
    assert_eq!(flags(&invalid)["code"], "VALIDATION_ERROR");
    within(client.cancel()).await.unwrap();
}

#[tokio::test]
async fn state_warnings_and_internal_errors() {
    let client = launch(BINARY, &[], client_config()).await;

    let over = call(
        &client,
        "billing",
        json!({"action": "charge", "invoice_id": "inv_0001", "amount_cents": 12001, "currency": "EUR"}),
    )
    .await;
    assert_eq!(flags(&over)["code"], "AMOUNT_OVER_BALANCE");
    assert_eq!(flags(&over)["errorCategory"], "validation");
    assert!(
        texts(&over)[0]
            .contains("<recovery>Charge at most 12000 cents for this invoice.</recovery>")
    );

    let paid = call(
        &client,
        "billing",
        json!({"action": "charge", "invoice_id": "inv_0001", "amount_cents": 12000, "currency": "EUR"}),
    )
    .await;
    assert_eq!(
        texts(&paid),
        [r#"{"id":"inv_0001","amount_cents":12000,"currency":"EUR","status":"paid"}"#]
    );

    let again = call(
        &client,
        "billing",
        json!({"action": "charge", "invoice_id": "inv_0001", "amount_cents": 12000, "currency": "EUR"}),
    )
    .await;
    assert_eq!(again.is_error, Some(false));
    assert_eq!(
        texts(&again)[1],
        "\
<tool_error code=\"ALREADY_PAID\" severity=\"warning\">
<message>Invoice inv_0001 is already paid</message>
<recovery>No action needed; do not charge again.</recovery>
</tool_error>"
    );
    assert_eq!(flags(&again)["isError"], false);

    let failed = call(
        &client,
        "billing",
        json!({"action": "refund", "invoice_id": "inv_0003", "amount_cents": 990}),
    )
    .await;
    assert_eq!(flags(&failed)["code"], "INTERNAL_ERROR");
    let envelope = texts(&failed)[0];
    assert!(
        envelope.contains("<detail key=\"errorId\">err_"),
        "{envelope}"
    );
    assert!(!envelope.contains("hunter2") && !envelope.contains("postgres"));
    within(client.cancel()).await.unwrap();
}

#[tokio::test]
async fn an_output_schema_action_answers_structured_content_or_a_plain_error() {
    let client = launch(BINARY, &[], client_config()).await;
    let tools = within(client.list_all_tools()).await.unwrap();
    let ledger = tools
        .iter()
        .find(|t| t.name == "ledger")
        .expect("the ledger tool");
    let output = ledger.output_schema.as_ref().expect("an output schema");
    assert_eq!(output["type"], "object");
    assert_eq!(
        output["required"],
        json!(["id", "currency", "balance_cents"])
    );

    let good = call(&client, "ledger", json!({"id": "inv_0003"})).await;
    assert_eq!(good.is_error, Some(false));
    let structured = json!({"balance_cents": 990, "currency": "EUR", "id": "inv_0003"});
    assert_eq!(good.structured_content, Some(structured.clone()));
    let text: Value = serde_json::from_str(texts(&good)[0]).unwrap();
    assert_eq!(text, structured);

    let missing = call(&client, "ledger", json!({"id": "inv_2026"})).await;
    assert_eq!(missing.is_error, Some(true));
    assert_eq!(missing.structured_content, None);
    assert!(texts(&missing)[0].starts_with("<tool_error code=\"NOT_FOUND\""));
    within(client.cancel()).await.unwrap();
}

#[tokio::test]
async fn flat_exposition_serves_one_tool_per_action() {
    let client = launch(BINARY, &["--flat"], client_config()).await;
    let tools = within(client.list_all_tools()).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "billing_list_invoices",
            "billing_get_invoice",
            "billing_charge",
            "billing_refund",
            "billing_export_invoices",
            "ledger"
        ]
    );
    let missing = call(&client, "billing_get_invoice", json!({"id": "inv_2026"})).await;
    assert!(
        texts(&missing)[0].contains("  <action>billing_list_invoices</action>\n"),
        "{}",
        texts(&missing)[0]
    );
    within(client.cancel()).await.unwrap();
}

#[tokio::test]
async fn the_server_exits_cleanly_when_the_client_disconnects() {
    // Spawned by hand (not through `TokioChildProcess`, which kills a child that lingers) to
    // read the exit status.
    let mut child = Command::new(BINARY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("fusion-billing starts");
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let client = within(client_config().serve((stdout, stdin)))
        .await
        .expect("initialize succeeds");
    let listed = call(&client, "billing", json!({"action": "list_invoices"})).await;
    assert_eq!(listed.is_error, Some(false));

    // Closing the client closes the server's stdin: MCP's stdio shutdown.
    within(client.cancel()).await.unwrap();
    let status = within(child.wait()).await.unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn a_client_that_closes_before_initialize_is_a_clean_stop() {
    let mut child = Command::new(BINARY)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("fusion-billing starts");
    let status = within(child.wait()).await.unwrap();
    assert!(status.success(), "{status}");
}
