//! A real rmcp client of fusion's tasks over an in-process duplex stream: connecting with or
//! without the Tasks extension, polling a task until it settles. Shared by the task tests.

use std::time::Duration;

use fusion::server::Server;
use rmcp::model::{ClientCapabilities, ClientConfig, DetailedTask, GetTaskParams, Implementation};
use rmcp::service::{RoleClient, RunningService};

pub(crate) type Client = RunningService<RoleClient, ClientConfig>;

/// A client of `server` that declares the Tasks extension when `tasks` is set.
pub(crate) async fn connect(server: Server, tasks: bool) -> Client {
    let capabilities = match tasks {
        true => ClientCapabilities::builder().enable_tasks().build(),
        false => ClientCapabilities::default(),
    };
    let config = ClientConfig::new(capabilities, Implementation::new("tasks-test", "1.0.0"));
    within(server.serve_in_process(config))
        .await
        .expect("client connects")
}

pub(crate) async fn within<F: std::future::IntoFuture>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .expect("answered within 20 s")
}

/// `tasks/get`.
pub(crate) async fn get(client: &Client, id: &str) -> Result<DetailedTask, rmcp::ServiceError> {
    within(client.peer().get_task(GetTaskParams::new(id.to_owned())))
        .await
        .map(|result| result.task)
}

/// Polls until the task settles.
pub(crate) async fn settled(client: &Client, id: &str) -> DetailedTask {
    within(async {
        loop {
            let task = get(client, id).await.expect("the task is found");
            if task.status().is_terminal() {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}
