//! Tasks (MCP Tasks extension, SEP-2663) through a real rmcp client over an in-process duplex
//! stream: an action that asks the user while it runs as a task (`input_required`, answered
//! with `tasks/update`, several questions at once answered one by one), an action that runs
//! only as a task (`#[action(task = required)]`), one whose task starts once its action has
//! asked in `input_required` rounds (`#[action(task(required, deferred))]`), and a task whose
//! action panics.

use std::collections::BTreeMap;
use std::time::Duration;

use fusion::RequestContext;
use fusion::elicit::{Unanswered, Unconfirmed};
use fusion::server::{Server, TASKS_META_KEY, TASKS_REQUIRED_META_KEY};
use fusion::tasks::{MemoryTaskStore, Tasks};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, DetailedTask,
    ErrorCode, Implementation, ProtocolVersion, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{ClientLifecycleMode, RoleClient, RunningService, serve_client_with_lifecycle};
#[path = "support/tasks.rs"]
mod support;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::{Client, connect, get, settled, within};

/// Deletes a file once the user confirms.
#[fusion::tool]
#[action(task)]
async fn delete(ctx: RequestContext) -> Result<String, Unconfirmed> {
    ctx.confirm("Delete report.pdf?").await?;
    Ok("Deleted report.pdf.".to_owned())
}

#[derive(Deserialize, JsonSchema)]
struct Name {
    /// Your name.
    name: String,
}

/// Asks two questions at once.
#[fusion::tool]
#[action(task)]
async fn both(ctx: RequestContext) -> Result<String, Unanswered> {
    let (name, confirmed) = tokio::join!(ctx.elicit::<Name>("Name?"), ctx.confirm("Go?"));
    Ok(format!("{} {}", name?.name, confirmed.is_ok()))
}

/// Runs only as a task.
#[fusion::tool]
#[action(task = required)]
async fn ledger() -> String {
    "ledger".to_owned()
}

/// Asks the user's name, then greets them as a task.
#[fusion::tool]
#[action(task(required, deferred))]
async fn welcome(ctx: RequestContext) -> Result<String, Unanswered> {
    let name = ctx.elicit::<Name>("Name?").await?.name;
    ctx.start_task().await;
    Ok(format!("Welcome, {name}."))
}

/// Asks the user's name, starts its task, then asks to go on.
#[fusion::tool]
#[action(task(deferred))]
async fn welcome_back(ctx: RequestContext) -> Result<String, Unanswered> {
    let name = ctx.elicit::<Name>("Name?").await?.name;
    ctx.start_task().await;
    Ok(match ctx.confirm("Go on?").await {
        Ok(()) => format!("Welcome back, {name}."),
        Err(refused) => format!("Not confirmed: {refused}"),
    })
}

/// Panics.
#[fusion::tool]
#[action(task)]
async fn crash() -> String {
    panic!("crash panics")
}

fn server() -> Server {
    Server::new("tasks-input", "1.0.0")
        .tool(Delete)
        .tool(Both)
        .tool(Ledger)
        .tool(Crash)
        .tool(Welcome)
        .tool(WelcomeBack)
        .tasks(Tasks::default().poll_interval(Duration::from_millis(20)))
}

async fn call(client: &Client, tool: &'static str) -> Result<CallToolResponse, rmcp::ServiceError> {
    within(client.call_tool_once(CallToolRequestParams::new(tool))).await
}

async fn task(client: &Client, tool: &'static str) -> String {
    match call(client, tool).await.expect("an answer") {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// Polls until the task waits on `count` questions; their keys and requests (as JSON).
async fn questions(client: &Client, id: &str, count: usize) -> BTreeMap<String, Value> {
    within(async {
        loop {
            let task = get(client, id).await.expect("the task is found");
            if let TaskPayload::InputRequired { input_requests } = &task.payload
                && input_requests.len() == count
            {
                assert_eq!(task.status(), TaskStatus::InputRequired);
                let requests = serde_json::to_value(input_requests).unwrap();
                return serde_json::from_value(requests).unwrap();
            }
            assert!(
                !task.status().is_terminal(),
                "settled while asking: {task:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

async fn answer(client: &Client, id: &str, key: &str, response: Value) {
    let responses = BTreeMap::from([(key.to_owned(), response)]);
    within(
        client
            .peer()
            .update_task(UpdateTaskParams::new(id, responses)),
    )
    .await
    .expect("acknowledged");
}

fn text(task: &DetailedTask) -> &str {
    match &task.payload {
        TaskPayload::Completed { result } => result["content"][0]["text"].as_str().unwrap(),
        other => panic!("expected a completed task, got {other:?}"),
    }
}

#[tokio::test]
async fn a_task_that_asks_is_input_required_until_tasks_update_answers_it() {
    let client = connect(server(), true).await;
    let id = task(&client, "delete").await;
    let asked = questions(&client, &id, 1).await;
    let (key, request) = asked.iter().next().unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Delete report.pdf?");

    // An answer to no outstanding question is acknowledged and ignored.
    answer(&client, &id, "not-asked", json!({"action": "accept"})).await;
    assert_eq!(questions(&client, &id, 1).await, asked);

    answer(
        &client,
        &id,
        key,
        json!({"action": "accept", "content": {"confirm": true}}),
    )
    .await;
    assert_eq!(text(&settled(&client, &id).await), "Deleted report.pdf.");

    // Declined: the action's own refusal, a completed task carrying the envelope.
    let id = task(&client, "delete").await;
    let key = questions(&client, &id, 1).await.into_keys().next().unwrap();
    answer(&client, &id, &key, json!({"action": "decline"})).await;
    let declined = settled(&client, &id).await;
    let TaskPayload::Completed { result } = &declined.payload else {
        panic!("expected a completed task, got {declined:?}")
    };
    assert_eq!(result["isError"], true);
}

#[tokio::test]
async fn questions_asked_together_are_answered_one_at_a_time() {
    let client = connect(server(), true).await;
    let id = task(&client, "both").await;
    let asked = questions(&client, &id, 2).await;
    let key_of = |message: &str| {
        let found = asked
            .iter()
            .find(|(_, r)| r["params"]["message"] == message);
        found.unwrap().0.clone()
    };
    let (name, go) = (key_of("Name?"), key_of("Go?"));

    answer(
        &client,
        &id,
        &go,
        json!({"action": "accept", "content": {"confirm": true}}),
    )
    .await;
    // Still waiting on the other, which alone is left.
    let left = questions(&client, &id, 1).await;
    assert_eq!(left.keys().collect::<Vec<_>>(), [&name]);

    answer(
        &client,
        &id,
        &name,
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )
    .await;
    assert_eq!(text(&settled(&client, &id).await), "Ada true");
}

#[tokio::test]
async fn an_action_that_runs_only_as_a_task_refuses_clients_without_the_extension() {
    let without = connect(server(), false).await;
    let refused = call(&without, "ledger").await.unwrap_err();
    let rmcp::ServiceError::McpError(error) = refused else {
        panic!("expected a JSON-RPC error, got {refused:?}")
    };
    assert_eq!(error.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
    let data = error.data.unwrap();
    assert_eq!(
        data["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    // An optional task action still runs directly for that client.
    assert!(matches!(
        call(&without, "crash").await,
        Ok(CallToolResponse::Complete(_))
    ));

    let with = connect(server(), true).await;
    let id = task(&with, "ledger").await;
    assert_eq!(text(&settled(&with, &id).await), "ledger");

    let tools = within(with.list_all_tools()).await.unwrap();
    let ledger = tools.iter().find(|tool| tool.name == "ledger").unwrap();
    let meta = ledger.meta.as_ref().unwrap();
    assert_eq!(meta.get(TASKS_META_KEY), Some(&json!(["ledger"])));
    assert_eq!(meta.get(TASKS_REQUIRED_META_KEY), Some(&json!(["ledger"])));
    let delete = tools.iter().find(|tool| tool.name == "delete").unwrap();
    assert_eq!(
        delete.meta.as_ref().unwrap().get(TASKS_REQUIRED_META_KEY),
        None
    );
}

/// A 2026-07-28 client (`server/discover`, no `initialize`) of `server` that shows forms and
/// declares the Tasks extension.
async fn stateless(server: Server) -> RunningService<RoleClient, ClientConfig> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        if let Ok(running) = server.serve_io(read, write).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities: ClientCapabilities = serde_json::from_value(json!({
        "elicitation": {"form": {}},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }))
    .unwrap();
    let config = ClientConfig::new(capabilities, Implementation::new("rounds", "1.0.0"));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    within(serve_client_with_lifecycle(config, client_end, lifecycle))
        .await
        .expect("server/discover succeeds")
}

#[tokio::test]
async fn a_deferred_task_asks_in_rounds_first_and_becomes_a_task_when_its_action_says() {
    let client = stateless(server()).await;
    let first = within(client.call_tool_once(CallToolRequestParams::new("welcome")))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(asked) = first else {
        panic!("expected input_required, got {first:?}")
    };
    let key = asked.input_requests.unwrap().into_keys().next().unwrap();
    let mut retry = CallToolRequestParams::new("welcome");
    retry.input_responses = Some(BTreeMap::from([(
        key,
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )]));
    retry.request_state = asked.request_state;
    let CallToolResponse::Task(created) = within(client.call_tool_once(retry)).await.unwrap()
    else {
        panic!("expected a task")
    };
    let id = created.task.task_id;
    assert_eq!(text(&settled(&client, &id).await), "Welcome, Ada.");
}

#[tokio::test]
async fn a_task_whose_action_panics_fails_with_a_json_rpc_error_and_no_result() {
    let client = connect(server(), true).await;
    let id = task(&client, "crash").await;
    let failed = settled(&client, &id).await;
    let TaskPayload::Failed { error } = &failed.payload else {
        panic!("expected a failed task, got {failed:?}")
    };
    assert_eq!(error["code"], -32603);
    assert!(!error["message"].as_str().unwrap().contains("crash panics"));
}

/// The `input_required` round of `tool` answered `response` to its one question.
async fn answered_round(
    client: &RunningService<RoleClient, ClientConfig>,
    tool: &'static str,
    asked: rmcp::model::InputRequiredResult,
    response: Value,
) -> CallToolResponse {
    let key = asked.input_requests.unwrap().into_keys().next().unwrap();
    let mut retry = CallToolRequestParams::new(tool);
    retry.input_responses = Some(BTreeMap::from([(key, response)]));
    retry.request_state = asked.request_state;
    within(client.call_tool_once(retry)).await.unwrap()
}

#[tokio::test]
async fn a_call_a_full_store_runs_directly_asks_in_rounds_like_any_direct_call() {
    let full =
        Tasks::new(MemoryTaskStore::with_capacity(1)).poll_interval(Duration::from_millis(20));
    let client = stateless(server().tasks(full)).await;
    let call = |tool| within(client.call_tool_once(CallToolRequestParams::new(tool)));
    // This task fills the store while it waits on its question.
    let CallToolResponse::Task(_) = call("delete").await.unwrap() else {
        panic!("expected a task")
    };

    // The next one runs as a direct call: its confirmation is an `input_required` round.
    let second = call("delete").await.unwrap();
    let CallToolResponse::InputRequired(asked) = second else {
        panic!("expected input_required, got {second:?}")
    };
    let yes = json!({"action": "accept", "content": {"confirm": true}});
    let done = answered_round(&client, "delete", asked, yes).await;
    let CallToolResponse::Complete(result) = done else {
        panic!("expected a direct answer, got {done:?}")
    };
    assert_eq!(
        result.content[0].as_text().unwrap().text,
        "Deleted report.pdf."
    );

    // A deferred task asks before its start, then finds the store full: it goes on as a
    // direct call, and what it asks after its start is asked in rounds too.
    let first = call("welcome_back").await.unwrap();
    let CallToolResponse::InputRequired(asked) = first else {
        panic!("expected input_required, got {first:?}")
    };
    let name = json!({"action": "accept", "content": {"name": "Ada"}});
    let then = answered_round(&client, "welcome_back", asked, name).await;
    let CallToolResponse::InputRequired(asked) = then else {
        panic!("expected the question after the start, got {then:?}")
    };
    let yes = json!({"action": "accept", "content": {"confirm": true}});
    let done = answered_round(&client, "welcome_back", asked, yes).await;
    let CallToolResponse::Complete(result) = done else {
        panic!("expected a direct answer, got {done:?}")
    };
    assert_eq!(
        result.content[0].as_text().unwrap().text,
        "Welcome back, Ada."
    );
}

#[tokio::test]
async fn an_answer_that_is_not_the_result_its_question_asks_for_is_refused_and_loses_nothing() {
    let client = connect(server(), true).await;
    let id = task(&client, "delete").await;
    let asked = questions(&client, &id, 1).await;
    let key = asked.keys().next().unwrap().clone();
    for misfit in [Value::Null, json!({"confirm": true}), json!("yes")] {
        let responses = BTreeMap::from([(key.clone(), misfit.clone())]);
        let refused = within(
            client
                .peer()
                .update_task(UpdateTaskParams::new(&id, responses)),
        )
        .await;
        let Err(rmcp::ServiceError::McpError(error)) = refused else {
            panic!("{misfit}: expected -32602, got {refused:?}")
        };
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{misfit}");
        assert!(error.message.contains("elicitation/create"), "{error:?}");
        // The question is still outstanding, the action still waiting on it.
        assert_eq!(questions(&client, &id, 1).await, asked);
    }
    let yes = json!({"action": "accept", "content": {"confirm": true}});
    answer(&client, &id, &key, yes).await;
    assert_eq!(text(&settled(&client, &id).await), "Deleted report.pdf.");
}
