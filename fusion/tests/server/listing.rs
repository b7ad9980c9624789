//! What a client learns before calling: `initialize` and `tools/list`, grouped and flat.

use fusion::server::{Exposition, Server};
use rmcp::model::ToolAnnotations;
use serde_json::{Value, json};

use super::tools::{Billing, Lab, Named, builder_panic, connect, server, within};

#[tokio::test]
async fn initialize_reports_the_servers_own_name_and_version() {
    let client = connect(server(&Lab::default()).instructions("Call billing first.")).await;
    let info = client.peer_info().expect("server info after initialize");
    let implementation = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(implementation.name, "billing-server");
    assert_eq!(implementation.version, "1.2.3");
    assert!(info.capabilities.tools.is_some());
    assert_eq!(info.instructions.as_deref(), Some("Call billing first."));
}

#[test]
fn server_info_reads_the_callers_cargo_toml() {
    // Expanded here, so it names this package (`fusion`'s tests), not a dependency.
    let info = fusion::server_info!();
    assert_eq!(info.name, env!("CARGO_PKG_NAME"));
    assert_eq!(info.version, env!("CARGO_PKG_VERSION"));
    let server = Server::with_info(info);
    assert_eq!(server.info().name, "fusion");
}

#[tokio::test]
async fn tools_list_advertises_grouped_tools() {
    let client = connect(server(&Lab::default())).await;
    let tools = within(client.list_all_tools()).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["billing", "add", "lab"]);

    let billing = &tools[0];
    assert_eq!(
        billing.description.as_deref(),
        Some("Invoices of the billing system.")
    );
    let schema = Value::Object((*billing.input_schema).clone());
    assert_flat_object(&schema);
    assert_eq!(schema["required"], json!(["action"]));
    assert_eq!(
        schema["properties"]["action"]["enum"],
        json!(["list_invoices", "get_invoice", "refund"])
    );
    // Declared by two actions with different descriptions: either schema is accepted.
    let id = &schema["properties"]["id"];
    assert_eq!(id["anyOf"].as_array().unwrap().len(), 2, "{id}");
    assert_eq!(
        id["description"],
        "Used by: get_invoice (required), refund (required)."
    );

    // The title is the doc comment's summary, in both places MCP versions read it.
    let title = "Invoices of the billing system";
    assert_eq!(billing.title.as_deref(), Some(title));
    // One action is destructive and not read-only: the tool as a whole is neither read-only
    // nor idempotent, and may be destructive and open-world.
    assert_eq!(
        billing.annotations,
        Some(ToolAnnotations::from_raw(
            Some(title.to_owned()),
            Some(false),
            Some(true),
            Some(false),
            Some(true)
        ))
    );
    let meta = &billing.meta.as_ref().expect("_meta").0;
    assert_eq!(
        meta["fusion/errors"],
        json!([
            {"action": "get_invoice", "code": "NOT_FOUND", "severity": "error", "category": "not_found", "retryable": false},
            {"action": "get_invoice", "code": "RATE_LIMITED", "severity": "error", "category": "rate_limit", "retryable": true},
        ])
    );

    let add = &tools[1];
    let schema = Value::Object((*add.input_schema).clone());
    assert_flat_object(&schema);
    assert_eq!(schema["required"], json!(["a", "b"]));
    // Every hint is stated: the unset ones with their MCP defaults, a read-only tool never
    // destructive.
    assert_eq!(
        add.annotations,
        Some(ToolAnnotations::from_raw(
            Some("Adds two numbers".to_owned()),
            Some(true),
            Some(false),
            Some(true),
            Some(true)
        ))
    );
    assert_eq!(add.meta.as_ref().unwrap().0["fusion/errors"], json!([]));

    // The wire form uses the MCP names.
    let wire = serde_json::to_value(add).unwrap();
    assert_eq!(wire["title"], "Adds two numbers");
    assert_eq!(
        wire["annotations"],
        json!({
            "title": "Adds two numbers",
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": true,
        })
    );
    assert_eq!(wire["_meta"], json!({"fusion/errors": []}));
}

#[tokio::test]
async fn tools_list_advertises_flat_tools() {
    let server = server(&Lab::default()).exposition(Exposition::Flat);
    let client = connect(server).await;
    let tools = within(client.list_all_tools()).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "billing_list_invoices",
            "billing_get_invoice",
            "billing_refund",
            "add",
            "lab_explode",
            "lab_wait",
            "lab_progress",
            "lab_whoami",
            "lab_echo",
        ]
    );
    let get_invoice = &tools[1];
    assert_eq!(
        get_invoice.description.as_deref(),
        Some("Fetches one invoice by ID.")
    );
    let schema = Value::Object((*get_invoice.input_schema).clone());
    assert_flat_object(&schema);
    assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
    assert!(schema["properties"].get("action").is_none(), "{schema}");
    assert_eq!(schema["required"], json!(["id"]));
    // Each flat tool carries its own action's title, hints and errors.
    let title = "Fetches one invoice by ID";
    assert_eq!(get_invoice.title.as_deref(), Some(title));
    assert_eq!(
        get_invoice.annotations,
        Some(ToolAnnotations::from_raw(
            Some(title.to_owned()),
            Some(true),
            Some(false),
            Some(true),
            Some(false)
        ))
    );
    let errors = &get_invoice.meta.as_ref().unwrap().0["fusion/errors"];
    assert_eq!(errors.as_array().unwrap().len(), 2);
    assert_eq!(
        tools[2].annotations,
        Some(ToolAnnotations::from_raw(
            Some("Refunds an invoice".to_owned()),
            Some(false),
            Some(true),
            Some(false),
            Some(true)
        ))
    );
    // A single-function tool keeps its own title in flat exposition.
    assert_eq!(tools[3].title.as_deref(), Some("Adds two numbers"));
    assert_eq!(
        tools[0].meta.as_ref().unwrap().0["fusion/errors"],
        json!([])
    );
}

#[test]
fn get_tool_finds_definitions_by_mcp_name() {
    use rmcp::ServerHandler;
    let grouped = Server::new("s", "1").tool(Billing);
    assert!(grouped.get_tool("billing").is_some());
    assert!(grouped.get_tool("billing_refund").is_none());
    let flat = grouped.exposition(Exposition::Flat);
    assert!(flat.get_tool("billing").is_none());
    assert_eq!(
        flat.get_tool("billing_refund").unwrap().name,
        "billing_refund"
    );
}

#[test]
#[should_panic(expected = "two MCP tools are named `billing`: tool `billing` and tool `billing`")]
fn registering_a_tool_name_twice_panics() {
    let _ = Server::new("s", "1").tool(Billing).tool(Billing);
}

#[test]
#[should_panic(
    expected = "two MCP tools are named `billing_refund`: action `refund` of tool \
                           `billing` and tool `billing_refund`"
)]
fn a_flat_name_clashing_with_a_tool_panics() {
    let _ = Server::new("s", "1")
        .tool(Billing)
        .tool(Named::single("billing_refund"))
        .exposition(Exposition::Flat);
}

#[test]
#[should_panic(
    expected = "`billing.v2` (tool `billing.v2`) is not a valid tool name: it \
                           contains `.`: MCP allows dots, but the Anthropic and OpenAI APIs do not"
)]
fn a_tool_name_llm_apis_reject_panics() {
    let _ = Server::new("s", "1").tool(Named::new("billing.v2", &["list"]));
}

#[test]
fn a_flat_name_over_64_characters_panics_when_flat() {
    // A hand-written tool: the macro checks the flat names of its own tools at compile time.
    let action = "a".repeat(60);
    let server = Server::new("s", "1").tool(Named::new("billing", &[&action]));
    let message = builder_panic(|| server.exposition(Exposition::Flat)).unwrap();
    assert!(
        message.starts_with(&format!(
            "fusion::server::Server: `billing_{action}` (action `{action}` of tool `billing`) is \
             not a valid tool name: it is 68 characters long"
        )),
        "{message}"
    );
}

#[test]
fn a_tool_without_doc_comments_has_no_title_and_every_hint() {
    let server = Server::new("s", "1").tool(Named::new("plain", &["one", "two"]));
    let plain = &server.tool_definitions()[0];
    assert_eq!(plain.title, None);
    let wire = serde_json::to_value(plain).unwrap();
    assert!(wire.get("title").is_none(), "{wire}");
    assert_eq!(
        wire["annotations"],
        json!({
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": true,
        })
    );
}

#[test]
fn names_clash_only_in_the_exposition_that_produces_them() {
    let named = Named::new;
    // Grouped: `billing_list` and `billing` are distinct tools.
    let server = Server::new("s", "1")
        .tool(named("billing_list", &["invoices"]))
        .tool(named("billing", &["refund"]));
    assert_eq!(server.tool_definitions().len(), 2);
    let result = builder_panic(|| server.exposition(Exposition::Flat));
    assert!(
        result.is_none(),
        "billing_list_invoices and billing_refund do not clash"
    );
    let clash = builder_panic(|| {
        Server::new("s", "1")
            .tool(named("billing_list", &["invoices"]))
            .tool(named("billing", &["list_invoices"]))
            .exposition(Exposition::Flat)
    });
    let message = clash.unwrap();
    assert_eq!(
        message,
        "fusion::server::Server: two MCP tools are named `billing_list_invoices`: action \
         `invoices` of tool `billing_list` and action `list_invoices` of tool `billing`; rename \
         one with `#[fusion::tool(name = \"...\")]` or `#[action(name = \"...\")]`"
    );
}

/// A single object schema: `type: object`, and no top-level combinator LLM APIs reject.
fn assert_flat_object(schema: &Value) {
    assert_eq!(schema["type"], "object", "{schema}");
    for combinator in ["oneOf", "anyOf", "allOf"] {
        assert!(schema.get(combinator).is_none(), "{combinator} in {schema}");
    }
}

#[tokio::test]
async fn tools_list_carries_the_cache_hints_set_and_a_stable_order() {
    use fusion::server::CacheScope;
    use std::time::Duration;

    let default = connect(server(&Lab::default())).await;
    let list = within(default.list_tools(None)).await.unwrap();
    // Unless set: never fresh, never public (rmcp leaves both out, or sends 0 ms and private).
    assert_eq!(list.ttl_ms.unwrap_or(0), 0);
    assert_ne!(list.cache_scope, Some(CacheScope::Public));

    let hinted = server(&Lab::default()).list_cache(Duration::from_secs(3600), CacheScope::Public);
    let client = connect(hinted).await;
    let first = within(client.list_tools(None)).await.unwrap();
    assert_eq!(first.ttl_ms, Some(3_600_000));
    assert_eq!(first.cache_scope, Some(CacheScope::Public));

    // The same tools in the same order on every call, and on another server built the same way
    // (a replica).
    let replica = connect(server(&Lab::default())).await;
    let names = |list: &rmcp::model::ListToolsResult| -> Vec<String> {
        list.tools.iter().map(|t| t.name.to_string()).collect()
    };
    let again = within(client.list_tools(None)).await.unwrap();
    let other = within(replica.list_tools(None)).await.unwrap();
    assert_eq!(names(&first), ["billing", "add", "lab"]);
    assert_eq!(names(&again), names(&first));
    assert_eq!(names(&other), names(&first));
    assert_eq!(again.tools, first.tools);
    assert_eq!(other.tools, first.tools);
}
