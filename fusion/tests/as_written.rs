//! Input schemas published as written (MCP 2026-07-28, SEP-2106): the keywords the portable
//! rewrite drops reach `tools/list` unchanged, for one tool or the whole server, the server
//! still validates arguments against them, and the providers that would refuse them are named
//! instead of refusing the tool.

#[path = "support/in_process.rs"]
mod in_process;

use std::panic::{AssertUnwindSafe, catch_unwind};

use fusion::portability::{Provider, refusing};
use fusion::schema::InputSchemas;
use fusion::server::Server;
use in_process::{call_tool, connect, texts};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// A contact: a phone or an email, and the one the method names.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend(
    "allOf" = [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if" = {"properties": {"method": {"const": "phone"}}, "required": ["method"]},
    "then" = {"required": ["phone"]},
    "else" = {"required": ["email"]},
))]
struct Contact {
    #[serde(default)]
    #[schemars(with = "String")]
    method: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    phone: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    email: Option<String>,
    #[serde(default)]
    home: Option<Address>,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(extend("$anchor" = "address"))]
struct Address {
    city: String,
}

/// Reaches a contact.
#[fusion::tool(input_schema = "as_written")]
fn reach(contact: Contact) -> String {
    let home = contact.home.map(|a| a.city).unwrap_or_default();
    let via =
        (contact.method.into_iter()).chain([contact.phone, contact.email].into_iter().flatten());
    format!("{} {home}", via.collect::<Vec<_>>().join(" "))
}

/// Reaches a contact, schema rewritten.
#[fusion::tool(input_schema = "portable")]
fn reach_portably(contact: Contact) -> String {
    reach(contact)
}

/// Reaches a contact, as the server says.
#[fusion::tool]
fn reach_by_default(contact: Contact) -> String {
    reach(contact)
}

fn schema_of(server: &Server, name: &str) -> Value {
    let tool = (server.tool_definitions().into_iter())
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"));
    Value::Object((*tool.input_schema).clone())
}

#[tokio::test]
async fn a_tool_as_written_is_listed_unchanged_and_validated_against_it() {
    // The default providers would refuse it: served anyway, the tool chose.
    let server = Server::new("contacts", "1.0.0").tool(Reach);
    let schema = schema_of(&server, "reach");
    assert_eq!(
        serde_json::to_value(schemars::schema_for!(Contact)).unwrap(),
        schema
    );
    assert_eq!(schema["$schema"], DIALECT);
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["$defs"]["Address"]["$anchor"], "address");
    assert!(schema["allOf"][0]["anyOf"].is_array(), "{schema:#}");
    for keyword in ["if", "then", "else"] {
        assert!(schema.get(keyword).is_some(), "{keyword}: {schema:#}");
    }
    let tool = &server.tool_definitions()[0];
    assert_eq!(
        refusing(tool, &Provider::DEFAULT),
        [Provider::Anthropic, Provider::OpenAi, Provider::Gemini]
    );

    let client = connect(server).await;
    let ok = call_tool(&client, "reach", json!({"method": "phone", "phone": "555"})).await;
    assert_eq!(ok.is_error, Some(false), "{:?}", texts(&ok));
    let home = json!({"email": "a@b.c", "home": {"city": "Oslo"}});
    let ok = call_tool(&client, "reach", home).await;
    assert_eq!(texts(&ok), ["a@b.c Oslo"]);
    // `if`/`then`: the phone method without a phone (an email does not do).
    let refused = call_tool(
        &client,
        "reach",
        json!({"method": "phone", "email": "a@b.c"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true), "{:?}", texts(&refused));
    assert!(
        texts(&refused)[0].contains("<validation_error"),
        "{:?}",
        texts(&refused)
    );
    // `allOf`/`anyOf`: neither.
    let refused = call_tool(&client, "reach", json!({"home": {"city": "Oslo"}})).await;
    assert_eq!(refused.is_error, Some(true), "{:?}", texts(&refused));
    // `additionalProperties: false`.
    let refused = call_tool(&client, "reach", json!({"email": "a@b.c", "fax": "1"})).await;
    assert!(
        texts(&refused)[0].contains("<field name=\"fax\">"),
        "{:?}",
        texts(&refused)
    );
}

#[test]
fn the_server_setting_applies_to_tools_that_do_not_say() {
    let server = Server::new("contacts", "1.0.0")
        .tool(ReachPortably)
        .tool(ReachByDefault);
    for name in ["reach_portably", "reach_by_default"] {
        let schema = schema_of(&server, name);
        for gone in ["$schema", "$defs", "allOf", "if", "additionalProperties"] {
            assert!(schema.get(gone).is_none(), "{name} {gone}: {schema:#}");
        }
    }
    // Set after the tools: the catalog is rebuilt; a tool's own setting wins.
    let server = server.input_schemas(InputSchemas::AsWritten);
    assert_eq!(schema_of(&server, "reach_by_default")["$schema"], DIALECT);
    assert!(
        schema_of(&server, "reach_portably")
            .get("$schema")
            .is_none()
    );
    // Back to portable: nothing refuses, nothing is as written.
    let server = server.input_schemas(InputSchemas::Portable);
    assert!(
        schema_of(&server, "reach_by_default")
            .get("$defs")
            .is_none()
    );
    assert_eq!(InputSchemas::default(), InputSchemas::Portable);
    assert_eq!(InputSchemas::AsWritten.name(), "as_written");
}

/// Deploys, the region also sent as a header.
#[fusion::tool(input_schema = "as_written")]
fn deploy(args: DeployArgs) -> String {
    args.region.unwrap_or_default()
}

#[derive(Deserialize, JsonSchema)]
struct DeployArgs {
    /// As written an `Option` is `["string", "null"]`, which no header may annotate.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: Option<String>,
}

#[test]
fn a_header_annotation_clients_would_drop_refuses_the_tool() {
    let panicked = catch_unwind(AssertUnwindSafe(|| Server::new("s", "1").tool(Deploy)));
    let payload = panicked.expect_err("refused at registration");
    let message = (payload.downcast_ref::<String>()).expect("a formatted panic");
    assert!(
        message.contains("the input schema of `deploy` (tool `deploy`): `x-mcp-header` `Region` of `region` needs a property of one type"),
        "{message}"
    );
    // Portable, the same field is `nullable` and of one type: served where no provider
    // checked refuses the `x-mcp-header` keyword (Gemini does).
    let server = Server::new("s", "1")
        .portable_to([Provider::Anthropic, Provider::OpenAi])
        .tool(DeployPortably);
    let schema = schema_of(&server, "deploy_portably");
    assert_eq!(
        schema["properties"]["region"],
        json!({"type": "string", "nullable": true, "x-mcp-header": "Region",
               "description": "As written an `Option` is `[\"string\", \"null\"]`, which no header may annotate."})
    );
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        Server::new("s", "1").tool(DeployPortably)
    }));
    let payload = panicked.expect_err("refused by the default providers");
    let message = (payload.downcast_ref::<String>()).expect("a formatted panic");
    assert!(
        message.contains("at /inputSchema/properties/region/x-mcp-header"),
        "{message}"
    );
    assert!(
        message.contains("tool `deploy_portably` would be refused by Gemini"),
        "{message}"
    );
}

/// Deploys, its schema rewritten.
#[fusion::tool(input_schema = "portable")]
fn deploy_portably(args: DeployArgs) -> String {
    deploy(args)
}
