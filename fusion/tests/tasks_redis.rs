//! The shared task store (feature `redis`) against a real `redis-server` on loopback: a task
//! started on one server is polled, fetched and cancelled on another; a finished result
//! outlives the server that ran it; a Redis that does not answer gets `SERVER_BUSY` and loses
//! nothing already stored.
#![cfg(feature = "redis")]

use std::time::Duration;

use fusion::auth::Principal;
use fusion::server::Server;
use fusion::tasks::{RedisTaskStore, Tasks};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, DetailedTask, TaskPayload,
    TaskStatus,
};
use serde_json::{Value, json};

#[path = "support/redis.rs"]
mod redis_server;
use redis_server::{Redis, free_port};
#[path = "support/tasks.rs"]
mod support;
use support::{Client, connect, get, settled, within};

/// A client declaring the Tasks extension.
async fn connect_tasks(server: Server) -> Client {
    connect(server, true).await
}

/// Exports of the billing system.
#[fusion::tool]
#[action(task)]
async fn export(args: ExportArgs) -> String {
    tokio::time::sleep(Duration::from_millis(args.millis)).await;
    format!("id,month\n1,{}", args.month)
}

/// The arguments of an export.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct ExportArgs {
    /// How long the export takes, in milliseconds.
    pub millis: u64,
    /// The month to export.
    pub month: String,
}

/// Asks two questions at once, then says both answers.
#[fusion::tool]
#[action(task)]
async fn ask(ctx: fusion::RequestContext) -> String {
    let (first, second) = tokio::join!(ctx.confirm("First?"), ctx.confirm("Second?"));
    format!("{} {}", first.is_ok(), second.is_ok())
}

fn replica(url: &str, prefix: &str) -> Server {
    let store = RedisTaskStore::new(url)
        .unwrap()
        .prefix(prefix)
        .timeout(Duration::from_millis(300));
    Server::new("exports", "1.0.0")
        .tool(Export)
        .tool(Ask)
        .tasks(Tasks::new(store).poll_interval(Duration::from_millis(20)))
        .local_principal(Principal::new("alice"))
}

async fn start(client: &Client, millis: u64) -> CallToolResponse {
    let Value::Object(arguments) = json!({"millis": millis, "month": "2026-11"}) else {
        unreachable!()
    };
    let request = CallToolRequestParams::new("export").with_arguments(arguments);
    within(client.call_tool_once(request))
        .await
        .expect("an answer")
}

async fn task(client: &Client, millis: u64) -> String {
    match start(client, millis).await {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn text(task: &DetailedTask) -> &str {
    match &task.payload {
        TaskPayload::Completed { result } => result["content"][0]["text"].as_str().unwrap(),
        other => panic!("expected a completed task, got {other:?}"),
    }
}

fn prefix() -> String {
    format!("fusion-test:{}", fusion::internal::new_error_id())
}

#[tokio::test]
async fn a_task_started_on_one_replica_is_polled_and_cancelled_on_another() {
    let Some(redis) = Redis::start().await else {
        return;
    };
    let prefix = prefix();
    let a = connect_tasks(replica(&redis.url, &prefix)).await;
    let b = connect_tasks(replica(&redis.url, &prefix)).await;

    let id = task(&a, 50).await;
    // B never ran it, yet finds it at once (stored before A answered) and fetches its result.
    assert!(get(&b, &id).await.is_ok());
    let done = settled(&b, &id).await;
    assert_eq!(text(&done), "id,month\n1,2026-11");
    assert_eq!(settled(&a, &id).await, done);

    // Cancelled on B: A, which runs it, sees the request at its next look and stops it.
    let long = task(&a, 30_000).await;
    within(b.peer().cancel_task(CancelTaskParams::new(long.clone())))
        .await
        .expect("acknowledged");
    assert_eq!(settled(&a, &long).await.status(), TaskStatus::Cancelled);
    assert_eq!(settled(&b, &long).await.status(), TaskStatus::Cancelled);
}

#[tokio::test]
async fn a_question_asked_on_one_replica_is_answered_through_another() {
    let Some(redis) = Redis::start().await else {
        return;
    };
    let prefix = prefix();
    let a = connect_tasks(replica(&redis.url, &prefix)).await;
    let b = connect_tasks(replica(&redis.url, &prefix)).await;
    let CallToolResponse::Task(created) =
        within(a.call_tool_once(CallToolRequestParams::new("ask")))
            .await
            .unwrap()
    else {
        panic!("expected a task")
    };
    let id = created.task.task_id;
    // B sees both questions A's action asked.
    let asked = within(async {
        loop {
            if let TaskPayload::InputRequired { input_requests } =
                get(&b, &id).await.unwrap().payload
                && input_requests.len() == 2
            {
                return input_requests;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let mut keys = asked.keys().cloned();
    let confirm = json!({"action": "accept", "content": {"confirm": true}});
    for (client, key, response) in [
        (&b, keys.next().unwrap(), confirm),
        (&a, keys.next().unwrap(), json!({"action": "decline"})),
    ] {
        let responses = std::collections::BTreeMap::from([(key, response)]);
        let update = rmcp::model::UpdateTaskParams::new(id.clone(), responses);
        within(client.peer().update_task(update)).await.unwrap();
    }
    // A, which runs it, took B's answer from the store at its next look.
    let done = settled(&b, &id).await;
    assert_eq!(text(&done), "true false");
}

#[tokio::test]
async fn a_finished_result_outlives_the_server_that_ran_it() {
    let Some(redis) = Redis::start().await else {
        return;
    };
    let prefix = prefix();
    let first = connect_tasks(replica(&redis.url, &prefix)).await;
    let id = task(&first, 1).await;
    let done = settled(&first, &id).await;
    within(first.cancel()).await.unwrap();

    let restarted = connect_tasks(replica(&redis.url, &prefix)).await;
    assert_eq!(get(&restarted, &id).await.unwrap(), done);
}

#[tokio::test]
async fn a_redis_that_does_not_answer_gets_server_busy_and_loses_nothing_stored() {
    let Some(redis) = Redis::start().await else {
        return;
    };
    let prefix = prefix();
    let client = connect_tasks(replica(&redis.url, &prefix)).await;
    let id = task(&client, 1).await;
    let done = settled(&client, &id).await;

    // Redis stops answering for two seconds.
    let admin = redis::Client::open(redis.url.as_str()).unwrap();
    let mut admin = admin.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(2000)
        .arg("ALL")
        .query_async(&mut admin)
        .await
        .unwrap();
    let CallToolResponse::Complete(refused) = start(&client, 1).await else {
        panic!("a refusal, not a task")
    };
    let refused = serde_json::to_value(refused).unwrap();
    assert_eq!(refused["isError"], true);
    assert_eq!(refused["_meta"]["fusion/error"]["code"], "SERVER_BUSY");
    assert_eq!(refused["_meta"]["fusion/error"]["isRetryable"], true);
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(
        !text.contains("127.0.0.1"),
        "the store's address stays private: {text}"
    );
    let error = get(&client, &id).await.unwrap_err();
    let rmcp::ServiceError::McpError(error) = error else {
        panic!("a JSON-RPC error")
    };
    assert_eq!(error.code.0, -32603);
    assert_eq!(error.data.unwrap()["code"], "SERVER_BUSY");

    // Back: the stored result is whole.
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    assert_eq!(get(&client, &id).await.unwrap(), done);
}

#[tokio::test]
async fn no_redis_at_all_refuses_tasks_without_crashing() {
    let url = format!("redis://127.0.0.1:{}/", free_port());
    let client = connect_tasks(replica(&url, "fusion-test:none")).await;
    let CallToolResponse::Complete(refused) = start(&client, 1).await else {
        panic!("a refusal, not a task")
    };
    let refused = serde_json::to_value(refused).unwrap();
    assert_eq!(refused["_meta"]["fusion/error"]["code"], "SERVER_BUSY");
    // `tasks/get` gets a JSON-RPC internal error, and the server keeps serving.
    let error = get(&client, "0123456789abcdef0123456789abcdef")
        .await
        .unwrap_err();
    let rmcp::ServiceError::McpError(error) = error else {
        panic!("a JSON-RPC error")
    };
    assert_eq!(error.code.0, -32603);
    assert!(within(client.list_all_tools()).await.is_ok());
}
