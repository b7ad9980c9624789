//! `fusion-conformance-client`: the client the official MCP conformance suite tests
//! (`clients/conformance/client.sh`). The suite starts a test server, appends its URL to the
//! command line and names the scenario in `MCP_CONFORMANCE_SCENARIO`; the protocol revision
//! asked for is `MCP_CONFORMANCE_PROTOCOL_VERSION` (the stateless 2026-07-28 lifecycle,
//! `server/discover` and per-request `_meta`, or the `initialize` handshake of older ones), and
//! some scenarios pass data in `MCP_CONFORMANCE_CONTEXT` (JSON).
//!
//! Tools are called through `fusion::client::Client` (names from `tools/list`, rounds of
//! `input_required` answered by its input handler); prompts and resources through rmcp's peer.

use std::env;

use anyhow::{Context, bail};
use fusion::client::Client;
use rmcp::RoleClient;
use rmcp::model::{
    ClientCapabilities, ClientConfig, GetPromptRequestParams, Implementation, InputRequests,
    InputResponses, ProtocolVersion, ReadResourceRequestParams, Tool,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Map, Value, json};

type Running = RunningService<RoleClient, ClientConfig>;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
        .init();
    let url = env::args()
        .nth(1)
        .context("usage: fusion-conformance-client <server-url>")?;
    let scenario = env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .unwrap_or_else(|_| ProtocolVersion::V_2026_07_28.to_string());
    let version: ProtocolVersion = serde_json::from_value(Value::String(version))?;
    let context: Value = match env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(context) => serde_json::from_str(&context).context("MCP_CONFORMANCE_CONTEXT")?,
        Err(_) => Value::Null,
    };

    let running = connect(&url, version).await?;
    let outcome = run(&scenario, &running, &context).await;
    running.cancel().await?;
    outcome
}

/// A client of `url` speaking `version` (`fusion::client::connect` chooses the lifecycle:
/// `server/discover` and per-request `_meta` from 2026-07-28 on, `initialize` before). It can
/// show forms (elicitation).
async fn connect(url: &str, version: ProtocolVersion) -> anyhow::Result<Running> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    let capabilities: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"form": {}}}))?;
    let implementation =
        Implementation::new("fusion-conformance-client", env!("CARGO_PKG_VERSION"));
    let config = ClientConfig::new(capabilities, implementation).with_protocol_version(version);
    Ok(fusion::client::connect(config, transport).await?)
}

async fn run(scenario: &str, running: &Running, context: &Value) -> anyhow::Result<()> {
    let client = Client::discover(running.peer().clone()).await?;
    match scenario {
        "tools_call" => {
            let output = client.call("add_numbers", json!({"a": 5, "b": 3})).await?;
            println!("{}", output.text().unwrap_or_default());
        }
        // Every request carries its `_meta`; `tools/list` (in `discover`) was one.
        "request-metadata" => {}
        "sep-2322-client-request-state" => request_state(client).await?,
        "http-standard-headers" => standard_headers(&client, running).await?,
        "http-custom-headers" => {
            let calls = context["toolCalls"].as_array().cloned().unwrap_or_default();
            for call in calls {
                let name = call["name"]
                    .as_str()
                    .context("a tool call without a name")?;
                client.call(name, call["arguments"].clone()).await?;
            }
        }
        // rmcp leaves tools with invalid `x-mcp-header` annotations out of `tools/list`: call
        // every tool left.
        "http-invalid-tool-headers" => {
            for tool in client.tools() {
                client.call(&tool.name, sample_arguments(tool)).await?;
            }
        }
        // The schema as listed, its `$ref`s unresolved (the test server has no tools/call).
        "json-schema-ref-no-deref" => {
            for tool in client.tools() {
                let schema = Value::Object((*tool.input_schema).clone());
                println!("{}: {schema}", tool.name);
            }
        }
        "json-schema-2020-12-preservation" => {
            let focal = (client.tools().iter())
                .find(|tool| tool.name == "json_schema_2020_12_tool")
                .context("no json_schema_2020_12_tool listed")?;
            let schema = Value::Object((*focal.input_schema).clone());
            client
                .call("json_schema_echo", json!({"schema": schema}))
                .await?;
        }
        other => bail!("unknown scenario `{other}`"),
    }
    Ok(())
}

/// SEP-2322: the `requestState` goes back as received, none when none came, and another call
/// made while a question is open carries neither the answers nor the state.
async fn request_state(client: Client) -> anyhow::Result<()> {
    let unrelated = client.clone();
    let client = client.with_input_handler(move |requests: InputRequests| {
        let unrelated = unrelated.clone();
        async move {
            // Between the rounds: a call of another tool, on its own.
            if let Err(err) = unrelated.call("test_mrtr_unrelated", Value::Null).await {
                eprintln!("test_mrtr_unrelated: {err}");
            }
            let yes = json!({"action": "accept", "content": {"confirmed": true}});
            let answers: InputResponses =
                requests.into_keys().map(|key| (key, yes.clone())).collect();
            Some(answers)
        }
    });
    for tool in [
        "test_mrtr_echo_state",
        "test_mrtr_no_state",
        "test_mrtr_no_result_type",
    ] {
        let output = client.call(tool, Value::Null).await?;
        println!("{tool}: {}", output.text().unwrap_or_default());
    }
    Ok(())
}

/// SEP-2243: `Mcp-Method` on every request, `Mcp-Name` on those naming a tool, prompt or
/// resource. Lists and calls every tool, reads every resource, gets every prompt.
async fn standard_headers(client: &Client, running: &Running) -> anyhow::Result<()> {
    let peer = running.peer();
    for tool in client.tools() {
        client.call(&tool.name, sample_arguments(tool)).await?;
    }
    for resource in peer.list_all_resources().await? {
        peer.read_resource(ReadResourceRequestParams::new(resource.uri.clone()))
            .await?;
    }
    for prompt in peer.list_all_prompts().await? {
        peer.get_prompt(GetPromptRequestParams::new(prompt.name.clone()))
            .await?;
    }
    Ok(())
}

/// Arguments for `tool`: each required property with a value of its type.
fn sample_arguments(tool: &Tool) -> Value {
    let schema = &tool.input_schema;
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    let mut arguments = Map::new();
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let kind = properties
            .and_then(|properties| properties.get(name))
            .and_then(|property| property.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            Some("null") => Value::Null,
            _ => json!("us-west1"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}
