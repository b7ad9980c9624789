//! The billing example's `refund` asks the user to confirm through MCP elicitation: a real
//! rmcp client that declares the capability answers for the user (accept or decline); one that
//! does not gets CONFIRMATION_UNAVAILABLE, and nothing the model sends gets the refund done.

#[path = "../billing.rs"]
#[allow(
    dead_code,
    reason = "only the tools are used here, not the command line"
)]
mod billing;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use billing::Billing;
use fusion::auth::Principal;
use fusion::server::Server;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ErrorData};
use serde_json::{Value, json};

/// A client whose user answers every elicitation with `answer`; it keeps each message shown.
#[derive(Clone)]
struct User {
    answer: ElicitationAction,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
        let mut config = ClientConfig::default();
        config.capabilities = capabilities;
        config.client_info = Implementation::new("eliciting-client", "1.0.0");
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        self.asked.lock().unwrap().push(message);
        let result = ElicitResult::new(self.answer.clone());
        Ok(match self.answer {
            ElicitationAction::Accept => result.with_content(json!({"confirm": true})),
            _ => result,
        })
    }
}

async fn serve<H: ClientHandler>(client: H) -> RunningService<RoleClient, H> {
    let server = Server::new("fusion-billing", "1.0.0")
        .tool(Billing::seeded())
        .local_principal(Principal::new("local-user").with_scopes(["refund"]));
    within(server.serve_in_process(client)).await.unwrap()
}

async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .expect("answered within 20 s")
}

async fn call<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    arguments: Value,
) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        unreachable!("an object literal")
    };
    let request = CallToolRequestParams::new("billing").with_arguments(arguments);
    within(client.call_tool(request)).await.unwrap()
}

fn text(result: &CallToolResult) -> String {
    result.content[0].as_text().unwrap().text.clone()
}

fn code(result: &CallToolResult) -> Value {
    result.meta.as_ref().unwrap().0["fusion/error"]["code"].clone()
}

/// The refund's arguments; `extra` (a JSON object) is merged in.
fn refund(amount_cents: u64, extra: Value) -> Value {
    let mut arguments =
        json!({"action": "refund", "invoice_id": "inv_0002", "amount_cents": amount_cents});
    for (name, value) in extra.as_object().unwrap() {
        arguments[name] = value.clone();
    }
    arguments
}

async fn status<H: ClientHandler>(client: &RunningService<RoleClient, H>) -> Value {
    let invoice = call(client, json!({"action": "get_invoice", "id": "inv_0002"})).await;
    serde_json::from_str::<Value>(&text(&invoice)).unwrap()["status"].clone()
}

fn user(answer: ElicitationAction) -> User {
    User {
        answer,
        asked: Arc::default(),
    }
}

#[tokio::test]
async fn a_client_that_can_ask_gets_the_users_answer() {
    let yes = user(ElicitationAction::Accept);
    let client = serve(yes.clone()).await;
    let result = call(&client, refund(100, json!({}))).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(
        *yes.asked.lock().unwrap(),
        ["Refund 100 cents on invoice inv_0002?"]
    );
    assert_eq!(status(&client).await, "open");
    within(client.cancel()).await.unwrap();
}

#[tokio::test]
async fn a_user_who_declines_stops_the_refund() {
    let no = user(ElicitationAction::Decline);
    let client = serve(no.clone()).await;
    let result = call(&client, refund(100, json!({}))).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(code(&result), "USER_DECLINED");
    assert!(
        text(&result).contains("Do not call again unless they ask."),
        "{}",
        text(&result)
    );
    assert_eq!(no.asked.lock().unwrap().len(), 1);
    assert_eq!(status(&client).await, "paid");
    within(client.cancel()).await.unwrap();
}

#[tokio::test]
async fn a_client_that_cannot_ask_gets_no_refund_whatever_the_model_sends() {
    let mut config = ClientConfig::default();
    config.client_info = Implementation::new("plain-client", "1.0.0");
    let client = serve(config).await;
    let result = call(&client, refund(100, json!({}))).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(code(&result), "CONFIRMATION_UNAVAILABLE");
    let envelope = text(&result);
    assert!(
        envelope.contains("<recovery>Do not call again: the user's client cannot show them"),
        "{envelope}"
    );
    // The old way to say the user agreed is no argument of `refund` at all.
    let claimed = call(&client, refund(100, json!({"confirmed": true}))).await;
    assert_eq!(code(&claimed), "VALIDATION_ERROR", "{}", text(&claimed));
    assert_eq!(status(&client).await, "paid");
    within(client.cancel()).await.unwrap();
}

#[tokio::test]
async fn a_refund_that_cannot_happen_is_refused_before_anyone_is_asked() {
    let yes = user(ElicitationAction::Accept);
    let client = serve(yes.clone()).await;
    let result = call(&client, refund(999_999, json!({}))).await;
    assert_eq!(code(&result), "AMOUNT_OVER_PAID");
    assert!(yes.asked.lock().unwrap().is_empty());
    within(client.cancel()).await.unwrap();
}

/// A client that declares elicitation but whose dialog fails.
struct BrokenDialog;

impl ClientHandler for BrokenDialog {
    fn get_info(&self) -> ClientConfig {
        user(ElicitationAction::Accept).get_info()
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Err(ErrorData::internal_error("the dialog crashed", None))
    }
}

#[tokio::test]
async fn a_failed_question_is_not_a_yes() {
    let client = serve(BrokenDialog).await;
    let result = call(&client, refund(100, json!({}))).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(code(&result), "CONFIRMATION_FAILED");
    assert_eq!(status(&client).await, "paid");
    within(client.cancel()).await.unwrap();
}
