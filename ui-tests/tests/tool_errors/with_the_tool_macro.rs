//! End to end with the real `#[fusion::tool]`: an action's derived error keeps its envelope
//! through a call, and its contracts reach the tool definition.

use fusion::{RequestContext, Tool, ToolError, ToolErrors, ToolExt};
use serde_json::{Map, Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct PayInvoice {
    id: String,
}

/// Pays invoices.
struct Ledger;

#[fusion::tool]
impl Ledger {
    /// Lists unpaid invoices.
    #[action(read_only)]
    fn list_unpaid(&self) -> Vec<String> {
        vec!["inv_1".to_owned()]
    }

    /// Pays one invoice.
    #[action]
    fn pay(&self, args: PayInvoice) -> Result<String, PayError> {
        Err(PayError::AlreadyPaid { id: args.id })
    }
}

#[derive(Debug, ToolErrors)]
#[tool_error(tool = Ledger)]
enum PayError {
    #[tool_error(code = "ALREADY_PAID", category = "validation", actions(list_unpaid))]
    AlreadyPaid {
        #[detail]
        id: String,
    },
    #[tool_error(internal)]
    Store(std::io::Error),
}

impl std::fmt::Display for PayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PayError::AlreadyPaid { .. } => f.write_str("The invoice is already paid."),
            PayError::Store(error) => write!(f, "store failed: {error}"),
        }
    }
}

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[tokio::test]
async fn a_derived_error_keeps_its_envelope_through_a_call() {
    let response = Ledger
        .call(
            arguments(json!({"action": "pay", "id": "inv_7"})),
            RequestContext::new(),
        )
        .await;
    let error: &ToolError = response.tool_error().expect("a tool error");
    assert_eq!(
        error.to_xml(),
        "<tool_error code=\"ALREADY_PAID\" severity=\"error\">\n\
         <message>The invoice is already paid.</message>\n\
         <available_actions>\n  <action>ledger.list_unpaid</action>\n</available_actions>\n\
         <details>\n  <detail key=\"id\">inv_7</detail>\n</details>\n\
         </tool_error>"
    );
    assert_eq!(error.flags()["errorCategory"], "validation");
}

#[test]
fn the_contracts_reach_the_tool_definition() {
    let definition = Ledger.definition();
    let pay = definition.action("pay").expect("the pay action");
    assert_eq!(pay.errors, PayError::error_contracts());
    assert_eq!(pay.errors[1].code, fusion::ErrorCode::InternalError);
    let store = ToolError::from(PayError::Store(std::io::Error::other("disk full")));
    assert_eq!(*store.code(), fusion::ErrorCode::InternalError);
    assert!(definition.action("list_unpaid").unwrap().errors.is_empty());
}
