//! `fusion::client::Client` and the billing example's `export_invoices`, a task for clients of
//! the MCP Tasks extension, over stdio with the `fusion-billing` binary: the client follows the
//! task and returns exactly the direct call's output; a call given up on cancels its task.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion::client::Client;
use rmcp::model::{
    ClientCapabilities, ClientConfig, GetTaskParams, Implementation, Task, TaskStatus,
};
use rmcp::service::{RoleClient, RunningService};
use serde_json::json;

#[path = "support/within.rs"]
mod within;
use within::within;

#[path = "support/launch.rs"]
mod launch;
use launch::launch;

const BINARY: &str = env!("CARGO_BIN_EXE_fusion-billing");

/// Launches `fusion-billing`; `tasks`: whether the connection declares the extension.
async fn connect(tasks: bool) -> RunningService<RoleClient, ClientConfig> {
    let capabilities = match tasks {
        true => ClientCapabilities::builder().enable_tasks().build(),
        false => ClientCapabilities::default(),
    };
    let config = ClientConfig::new(capabilities, Implementation::new("billing-client", "1.0.0"));
    launch(BINARY, &[], config).await
}

#[tokio::test]
async fn an_export_followed_as_a_task_returns_the_direct_calls_output() {
    let running = connect(false).await;
    let direct = Client::discover(running.peer().clone()).await.unwrap();
    let tasked = direct.clone().with_tasks(ClientCapabilities::default());
    let export = json!({"format": "csv", "delay_ms": 200});

    let plain = within(direct.call("billing.export_invoices", export.clone()))
        .await
        .unwrap();
    let output = within(tasked.call("billing.export_invoices", export))
        .await
        .unwrap();
    assert_eq!(plain.task_id(), None);
    assert!(output.task_id().is_some(), "ran as a task");
    assert_eq!(output.result().content, plain.result().content);
    assert!(output.text().unwrap().starts_with("id,"));
}

#[tokio::test]
async fn an_export_given_up_on_is_cancelled() {
    let running = connect(true).await;
    let seen: Arc<Mutex<Vec<Task>>> = Arc::default();
    let record = Arc::clone(&seen);
    let client = Client::discover(running.peer().clone())
        .await
        .unwrap()
        .on_task(move |task: &Task| record.lock().unwrap().push(task.clone()));
    let slow = json!({"format": "json", "delay_ms": 60_000});

    let call = client.call("billing.export_invoices", slow);
    assert!(
        tokio::time::timeout(Duration::from_millis(500), call)
            .await
            .is_err(),
        "still exporting at the deadline"
    );
    let id = seen.lock().unwrap()[0].task_id.clone();
    let status = within(async {
        loop {
            let read = running
                .peer()
                .get_task(GetTaskParams::new(id.clone()))
                .await;
            let status = read.expect("the task is found").task.status();
            if status.is_terminal() {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert_eq!(status, TaskStatus::Cancelled);
}
