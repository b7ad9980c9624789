//! The billing example's `export_invoices` as a task (MCP Tasks extension), driven over stdio by
//! rmcp's client declaring the extension: the call is answered with a task, `tasks/get` gives
//! the export once it is done, `tasks/cancel` stops a slow one, and a call refused before it
//! runs is answered directly.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, DetailedTask, GetTaskParams, Implementation, ResultType, TaskPayload, TaskStatus,
};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

#[path = "support/within.rs"]
mod within;
use within::within;

#[path = "support/launch.rs"]
mod launch;
use launch::launch;

const BINARY: &str = env!("CARGO_BIN_EXE_fusion-billing");

type Client = RunningService<RoleClient, ClientConfig>;

/// A client that declares the tasks extension, or one that does not.
async fn client(tasks: bool) -> Client {
    let capabilities = match tasks {
        true => ClientCapabilities::builder().enable_tasks().build(),
        false => ClientCapabilities::default(),
    };
    let config = ClientConfig::new(
        capabilities,
        Implementation::new("billing-tasks-test", "0.0.1"),
    );
    launch(BINARY, &[], config).await
}

async fn send(client: &Client, arguments: Value) -> CallToolResponse {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new("billing").with_arguments(arguments);
    within(client.call_tool_once(params))
        .await
        .expect("an answer")
}

/// The task a call was answered with.
fn task_id(response: CallToolResponse) -> String {
    match response {
        CallToolResponse::Task(created) => {
            assert_eq!(created.task.status, TaskStatus::Working);
            assert_eq!(created.task.poll_interval_ms, Some(500));
            assert_eq!(created.task.ttl_ms, Some(3_600_000));
            created.task.task_id
        }
        other => panic!("expected a task, got {other:?}"),
    }
}

async fn get(client: &Client, id: &str) -> DetailedTask {
    let params = GetTaskParams::new(id.to_owned());
    within(client.peer().get_task(params))
        .await
        .expect("the task")
        .task
}

/// Polls every `pollIntervalMs` until the task settles.
async fn settled(client: &Client, id: &str) -> DetailedTask {
    within(async {
        loop {
            let task = get(client, id).await;
            if task.status().is_terminal() {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
    .await
}

#[tokio::test]
async fn an_export_runs_as_a_task_and_completes_with_the_direct_calls_result() {
    let tasks = client(true).await;
    let export = json!({"action": "export_invoices", "format": "csv", "delay_ms": 300});
    let id = task_id(send(&tasks, export.clone()).await);
    assert_eq!(get(&tasks, &id).await.status(), TaskStatus::Working);
    let TaskPayload::Completed { result } = settled(&tasks, &id).await.payload else {
        panic!("a completed task")
    };

    // A client without the extension gets the same result from the same call, directly.
    let plain = client(false).await;
    let CallToolResponse::Complete(direct) = send(&plain, export).await else {
        panic!("a direct result")
    };
    let mut result: CallToolResult = serde_json::from_value(Value::Object(result)).unwrap();
    // The stored result says `resultType: "complete"`, which the direct answer to a client of
    // an earlier revision (this one initialized) leaves out; the rest is the same.
    assert_eq!(result.result_type.take(), Some(ResultType::COMPLETE));
    assert_eq!(result, direct);
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        result.content[0].as_text().unwrap().text,
        "id,amount_cents,currency,status\n\
         inv_0001,12000,EUR,open\n\
         inv_0002,5000,USD,paid\n\
         inv_0003,990,EUR,open\n"
    );
    within(tasks.cancel()).await.unwrap();
    within(plain.cancel()).await.unwrap();
}

#[tokio::test]
async fn a_call_refused_before_it_runs_is_answered_directly_and_a_slow_export_is_cancelled() {
    let tasks = client(true).await;
    let too_slow = json!({"action": "export_invoices", "format": "json", "delay_ms": 60_001});
    let CallToolResponse::Complete(refused) = send(&tasks, too_slow).await else {
        panic!("a validation error is answered directly")
    };
    let flags = &refused.meta.as_ref().expect("_meta").0["fusion/error"];
    assert_eq!(flags["code"], "VALIDATION_ERROR");

    let slow = json!({"action": "export_invoices", "format": "json", "delay_ms": 60_000});
    let id = task_id(send(&tasks, slow).await);
    let cancel = CancelTaskParams::new(id.clone());
    within(tasks.peer().cancel_task(cancel))
        .await
        .expect("acknowledged");
    assert_eq!(settled(&tasks, &id).await.status(), TaskStatus::Cancelled);
    within(tasks.cancel()).await.unwrap();
}
