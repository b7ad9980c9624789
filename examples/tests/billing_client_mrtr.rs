//! `fusion::client::Client` in the stateless 2026-07-28 revision: the billing example's
//! `refund` asks the user to confirm through a multi round-trip request (`input_required`).
//! rmcp's client starts with `server/discover` (no `initialize`) and declares form elicitation
//! in every request's `_meta`; the server runs in process at the other end of a pipe. The
//! question reaches the application (a handler, or a typed error to resume from), never a
//! silent retry; a forged or replayed state is refused with JSON-RPC `-32602`. A client
//! that declares tasks on its calls is asked all the same, and follows an export's task.

#[path = "../billing.rs"]
#[allow(
    dead_code,
    reason = "only the tools are used here, not the command line"
)]
mod billing;

use std::sync::{Arc, Mutex};

use billing::Billing;
use fusion::auth::Principal;
use fusion::client::{CallError, Client, InputRequired};
use fusion::server::Server;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitResult, ElicitationAction, Implementation,
    InputRequest, InputRequests, InputResponses, ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, RoleClient, RunningService, ServiceError, serve_client_with_lifecycle,
};
use serde_json::{Value, json};

#[path = "support/within.rs"]
mod within;
use within::within;

/// A 2026-07-28 client of the billing server that can show forms (`elicitation.form`).
async fn connect() -> RunningService<RoleClient, ClientConfig> {
    let server = Server::new("fusion-billing", "1.0.0")
        .tool(Billing::seeded())
        .local_principal(Principal::new("local-user").with_scopes(["refund"]));
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        if let Ok(running) = server.serve_io(read, write).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
    let config = ClientConfig::new(capabilities, Implementation::new("mrtr-client", "1.0.0"));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let running = within(serve_client_with_lifecycle(config, client_end, lifecycle))
        .await
        .expect("server/discover succeeds");
    let version = running.peer().peer_info().unwrap().protocol_version.clone();
    assert_eq!(version, ProtocolVersion::V_2026_07_28);
    running
}

const REFUND: &str = "billing.refund";

fn refund() -> Value {
    json!({"invoice_id": "inv_0002", "amount_cents": 100})
}

/// The user's answer to every question, keyed as asked; records each message shown.
fn answer(
    action: ElicitationAction,
    asked: &Arc<Mutex<Vec<String>>>,
) -> impl Fn(InputRequests) -> std::future::Ready<Option<InputResponses>> + use<> {
    let asked = Arc::clone(asked);
    move |requests: InputRequests| {
        let mut asked = asked.lock().unwrap();
        asked.extend(requests.values().map(message));
        std::future::ready(Some(responses(&requests, action.clone())))
    }
}

fn message(request: &InputRequest) -> String {
    let InputRequest::Elicitation(request) = request else {
        panic!("an elicitation, got {request:?}")
    };
    serde_json::to_value(&request.params).unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn responses(requests: &InputRequests, action: ElicitationAction) -> InputResponses {
    let confirm = matches!(action, ElicitationAction::Accept);
    let mut result = ElicitResult::new(action);
    if confirm {
        result = result.with_content(json!({"confirm": true}));
    }
    let result = serde_json::to_value(result).unwrap();
    requests
        .keys()
        .map(|key| (key.clone(), result.clone()))
        .collect()
}

async fn status(client: &Client) -> String {
    let invoice = within(client.call("billing.get_invoice", json!({"id": "inv_0002"})))
        .await
        .expect("the invoice");
    invoice.json::<Value>().unwrap()["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Asks without a handler: the question comes back as a typed error.
async fn question(client: &Client) -> InputRequired {
    match within(client.call(REFUND, refund())).await {
        Err(CallError::InputRequired(input)) => *input,
        other => panic!("expected input_required, got {other:?}"),
    }
}

#[tokio::test]
async fn the_handler_confirms_and_the_call_completes_in_a_second_round() {
    let running = connect().await;
    let asked = Arc::default();
    let client = Client::new(running.peer().clone())
        .with_input_handler(answer(ElicitationAction::Accept, &asked));
    let output = within(client.call(REFUND, refund()))
        .await
        .expect("refunded");
    assert_eq!(output.attempts(), 1, "an answered question is no retry");
    assert_eq!(output.json::<Value>().unwrap()["id"], "inv_0002");
    assert_eq!(
        *asked.lock().unwrap(),
        ["Refund 100 cents on invoice inv_0002?"]
    );
    assert_eq!(status(&client).await, "open");
}

#[tokio::test]
async fn a_declining_handler_gets_the_servers_envelope_and_no_refund() {
    let running = connect().await;
    let asked = Arc::default();
    let client = Client::new(running.peer().clone())
        .with_input_handler(answer(ElicitationAction::Decline, &asked));
    let error = within(client.call(REFUND, refund())).await.unwrap_err();
    let failure = error.tool_failure().expect("the server's envelope");
    assert_eq!(failure.flags().code.as_str(), "USER_DECLINED");
    assert_eq!(failure.attempts(), 1, "not retried");
    assert!(failure.tool_error().is_some());
    assert_eq!(asked.lock().unwrap().len(), 1, "asked once");
    assert_eq!(status(&client).await, "paid");
}

#[tokio::test]
async fn without_a_handler_the_question_is_returned_and_resume_completes_the_call() {
    let running = connect().await;
    let client = Client::new(running.peer().clone());
    let input = question(&client).await;
    assert_eq!(input.tool(), "billing");
    assert_eq!(input.arguments().unwrap()["action"], "refund");
    assert!(input.request_state().is_some());
    let messages: Vec<String> = input.requests().values().map(message).collect();
    assert_eq!(messages, ["Refund 100 cents on invoice inv_0002?"]);
    assert_eq!(
        status(&client).await,
        "paid",
        "nothing done before the answer"
    );

    let answers = responses(input.requests(), ElicitationAction::Accept);
    let output = within(client.resume(input, answers))
        .await
        .expect("refunded");
    assert_eq!(output.json::<Value>().unwrap()["id"], "inv_0002");
    assert_eq!(status(&client).await, "open");
}

#[tokio::test]
async fn a_question_kept_as_json_resumes_after_a_restart() {
    let running = connect().await;
    let client = Client::new(running.peer().clone());
    let kept = serde_json::to_string(&question(&client).await).unwrap();

    let input: InputRequired = serde_json::from_str(&kept).unwrap();
    let answers = responses(input.requests(), ElicitationAction::Accept);
    within(client.resume(input, answers))
        .await
        .expect("refunded");
    assert_eq!(status(&client).await, "open");
}

#[tokio::test]
async fn a_forged_or_replayed_state_is_a_typed_failure_and_never_a_yes() {
    let running = connect().await;
    let client = Client::new(running.peer().clone());
    let input = question(&client).await;
    let answers = responses(input.requests(), ElicitationAction::Accept);

    // The state tampered with: the server refuses it (JSON-RPC -32602, `data.code`
    // REQUEST_STATE_INVALID); not retried.
    let mut forged = serde_json::to_value(&input).unwrap();
    let state = forged["inputRequired"]["requestState"].as_str().unwrap();
    let tampered = format!("{}AAAA", &state[..state.len() - 4]);
    forged["inputRequired"]["requestState"] = json!(tampered);
    let forged: InputRequired = serde_json::from_value(forged).unwrap();
    let error = within(client.resume(forged, answers.clone()))
        .await
        .unwrap_err();
    refused(&error);
    assert_eq!(status(&client).await, "paid");

    // The genuine state works once; sent again, it is refused the same way.
    within(client.resume(input.clone(), answers.clone()))
        .await
        .expect("refunded");
    let error = within(client.resume(input, answers)).await.unwrap_err();
    refused(&error);
    assert_eq!(status(&client).await, "open");
}

/// A state refused: JSON-RPC `-32602`, its `data.code` `REQUEST_STATE_INVALID`.
fn refused(error: &CallError) {
    let CallError::Protocol(ServiceError::McpError(error)) = error else {
        panic!("a JSON-RPC error, got {error:?}")
    };
    assert_eq!(error.code.0, -32602);
    assert_eq!(
        error.data.as_ref().unwrap()["code"],
        "REQUEST_STATE_INVALID"
    );
}

#[tokio::test]
async fn a_client_declaring_tasks_with_the_connections_capabilities_is_still_asked_and_follows_tasks()
 {
    let running = connect().await;
    let asked = Arc::default();
    let form: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
    let client = Client::new(running.peer().clone())
        .with_tasks(form)
        .with_input_handler(answer(ElicitationAction::Accept, &asked));
    let output = within(client.call(REFUND, refund()))
        .await
        .expect("refunded");
    assert_eq!(output.task_id(), None, "refund is no task action");
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert_eq!(status(&client).await, "open");

    // On this stateless connection too, an export is a task, followed to its end.
    let export = json!({"format": "csv"});
    let output = within(client.call("billing.export_invoices", export))
        .await
        .expect("exported");
    assert!(output.task_id().is_some());
    assert!(output.text().unwrap().starts_with("id,"));
}
