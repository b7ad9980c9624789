//! `Server::hide_unauthorized_actions` driven by a real rmcp client over an in-process duplex
//! stream, the caller being the server's local principal: each caller lists only what its
//! scopes allow, and a hidden action or tool is answered byte for byte as one that does not
//! exist (compared with a server where it really does not), in both expositions.

#[path = "support/within.rs"]
mod within;

use std::time::Duration;

use fusion::ToolError;
use fusion::auth::Principal;
use fusion::server::{CacheScope, Exposition, Server};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use within::within;

/// Invoices.
pub struct Billing;

/// Bills customers.
#[fusion::tool]
impl Billing {
    /// Lists invoices.
    #[action(read_only)]
    pub fn list(&self) -> Result<&'static str, ToolError> {
        Ok("no invoices")
    }

    /// Shows one invoice.
    #[action(read_only)]
    pub fn get(&self) -> Result<&'static str, ToolError> {
        Ok("inv_1")
    }

    /// Charges a card.
    #[action(scopes("charge"))]
    pub fn charge(&self) -> Result<&'static str, ToolError> {
        Ok("charged")
    }
}

/// `Billing` as it would be without `charge`: what a caller without the scope must not be
/// able to tell apart from it.
pub struct BillingWithoutCharge;

/// Bills customers.
#[fusion::tool(name = "billing")]
impl BillingWithoutCharge {
    /// Lists invoices.
    #[action(read_only)]
    pub fn list(&self) -> Result<&'static str, ToolError> {
        Ok("no invoices")
    }

    /// Shows one invoice.
    #[action(read_only)]
    pub fn get(&self) -> Result<&'static str, ToolError> {
        Ok("inv_1")
    }
}

/// Administration.
pub struct Admin;

/// Administers the ledger.
#[fusion::tool]
impl Admin {
    /// Purges the ledger.
    #[action(scopes("admin"))]
    pub fn purge(&self) -> Result<&'static str, ToolError> {
        Ok("purged")
    }

    /// Audits the ledger.
    #[action(read_only, scopes("admin"))]
    pub fn audit(&self) -> Result<&'static str, ToolError> {
        Ok("audited")
    }
}

type Client = RunningService<RoleClient, ()>;

/// The server that hides, its caller the local principal holding `scopes`.
fn hiding(exposition: Exposition, scopes: &[&str]) -> Server {
    Server::new("billing", "1.0.0")
        .tool(Billing)
        .tool(Admin)
        .exposition(exposition)
        .hide_unauthorized_actions(true)
        .local_principal(Principal::new("ada").with_scopes(scopes.iter().copied()))
}

/// The server where what the caller of `hiding(exposition, &[])` must not see does not exist.
fn without(exposition: Exposition) -> Server {
    Server::new("billing", "1.0.0")
        .tool(BillingWithoutCharge)
        .exposition(exposition)
        .local_principal(Principal::new("ada"))
}

async fn connect(server: Server) -> Client {
    within(server.serve_in_process(())).await.unwrap()
}

async fn list(client: &Client) -> Value {
    serde_json::to_value(within(client.list_all_tools()).await.unwrap()).unwrap()
}

/// A call's whole answer: the result as JSON, or the JSON-RPC error.
async fn answer(client: &Client, name: &str, arguments: Value) -> String {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    match within(client.call_tool(params)).await {
        Ok(result) => serde_json::to_string(&result).unwrap(),
        Err(error) => format!("{error:?}"),
    }
}

#[tokio::test]
async fn a_caller_lists_only_the_actions_its_scopes_allow() {
    for exposition in [Exposition::Grouped, Exposition::Flat] {
        let hidden = connect(hiding(exposition, &[])).await;
        let absent = connect(without(exposition)).await;
        // The shrunk list is the list of a server without the hidden action and tool: the
        // discriminator's enum, the fields and `_meta` (errors, scopes) alike.
        assert_eq!(list(&hidden).await, list(&absent).await, "{exposition:?}");

        // Granted everything, a caller sees every tool, as without the setting.
        let granted = connect(hiding(exposition, &["charge", "admin"])).await;
        let full = connect(
            Server::new("billing", "1.0.0")
                .tool(Billing)
                .tool(Admin)
                .exposition(exposition),
        )
        .await;
        assert_eq!(list(&granted).await, list(&full).await, "{exposition:?}");
    }
}

#[tokio::test]
async fn a_grouped_tool_shrinks_to_the_allowed_actions() {
    let client = connect(hiding(Exposition::Grouped, &["admin"])).await;
    let tools = list(&client).await;
    let names: Vec<&str> = (tools.as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["billing", "admin"]);
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["action"]["enum"],
        json!(["list", "get"])
    );
    assert!(tools[0]["_meta"].get("fusion/scopes").is_none(), "{tools}");
    assert_eq!(
        tools[1]["_meta"]["fusion/scopes"],
        json!({"purge": ["admin"], "audit": ["admin"]})
    );
    // What is visible runs.
    assert!(
        answer(&client, "admin", json!({"action": "audit"}))
            .await
            .contains("audited")
    );
}

#[tokio::test]
async fn a_hidden_action_answers_exactly_as_one_that_does_not_exist() {
    let grouped = [
        ("billing", json!({"action": "charge"})),
        ("billing", json!({"action": "chrge"})),
        ("billing", json!({"action": "refund"})),
        ("billing", json!({})),
        ("billing", json!({"action": 7})),
        ("admin", json!({"action": "purge"})),
        ("admin", json!({})),
    ];
    let flat = [
        ("billing_charge", json!({})),
        ("billing_list", json!({})),
        ("admin_purge", json!({})),
        ("admin_audit", json!({})),
        ("admin", json!({})),
    ];
    for envelope in [false, true] {
        for (exposition, calls) in [
            (Exposition::Grouped, &grouped[..]),
            (Exposition::Flat, &flat[..]),
        ] {
            let hidden = connect(hiding(exposition, &[]).unknown_tool_as_envelope(envelope)).await;
            let absent = connect(without(exposition).unknown_tool_as_envelope(envelope)).await;
            for (name, arguments) in calls {
                assert_eq!(
                    answer(&hidden, name, arguments.clone()).await,
                    answer(&absent, name, arguments.clone()).await,
                    "{exposition:?}, envelope {envelope}: {name} {arguments}"
                );
            }
        }
    }
}

#[tokio::test]
async fn a_public_list_cache_is_answered_private_while_hiding() {
    let server =
        hiding(Exposition::Grouped, &[]).list_cache(Duration::from_secs(60), CacheScope::Public);
    let client = connect(server).await;
    let list = within(client.list_tools(None)).await.unwrap();
    assert_eq!(list.cache_scope, Some(CacheScope::Private));
}
