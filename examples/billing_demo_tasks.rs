//! `--demo`, the task steps: `export_invoices`, called by a client of the MCP Tasks extension
//! (`io.modelcontextprotocol/tasks`), is answered at once with a task; the client polls
//! `tasks/get` every `pollIntervalMs` until the export is there, or stops a slow one with
//! `tasks/cancel`.

use std::time::Duration;

use fusion::server::{Exposition, Server};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    CreateTaskResult, DetailedTask, GetTaskParams, Implementation, TaskPayload,
};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Value, json};

use super::{heading, request, show};

/// The two steps, as `number` and `number + 1`.
pub(crate) async fn run(server: Server, exposition: Exposition, number: u32) -> anyhow::Result<()> {
    let mut config = ClientConfig::default();
    config.capabilities = ClientCapabilities::builder().enable_tasks().build();
    config.client_info = Implementation::new("fusion-billing-demo", env!("CARGO_PKG_VERSION"));
    let client = server.serve_in_process(config).await?;
    let peer = client.peer();

    heading(
        number,
        "A long-running action runs as a task: answered at once, then polled until done",
    );
    println!("client capabilities: {{\"extensions\":{{\"io.modelcontextprotocol/tasks\":{{}}}}}}");
    let export = json!({"format": "csv", "delay_ms": 1200});
    let created = start(peer, exposition, export).await?;
    let task = poll(peer, &created).await?;
    if let TaskPayload::Completed { result } = task.payload {
        println!("its result, exactly what a direct call answers:");
        show(&serde_json::from_value(Value::Object(result))?);
    }

    heading(
        number + 1,
        "A slow export cancelled: acknowledged, and the task says so",
    );
    let export = json!({"format": "json", "delay_ms": 60_000});
    let created = start(peer, exposition, export).await?;
    let id = created.task.task_id.clone();
    peer.cancel_task(CancelTaskParams::new(id)).await?;
    println!("request: tasks/cancel: acknowledged");
    poll(peer, &created).await?;
    println!();
    client.cancel().await?;
    Ok(())
}

/// Calls `export_invoices` with `arguments` and prints the `CreateTaskResult` it is answered
/// with (its task id and timestamps differ from run to run).
async fn start(
    peer: &Peer<RoleClient>,
    exposition: Exposition,
    arguments: Value,
) -> anyhow::Result<CreateTaskResult> {
    let (tool, arguments) = request(exposition, "export_invoices", arguments)
        .expect("export_invoices has a request in both expositions");
    println!(
        "request: tools/call {tool} {}",
        Value::Object(arguments.clone())
    );
    let params = CallToolRequestParams::new(tool).with_arguments(arguments);
    match peer.call_tool_once(params).await? {
        CallToolResponse::Task(created) => {
            println!("CreateTaskResult: {}", serde_json::to_string(&created)?);
            Ok(created)
        }
        other => anyhow::bail!("expected a task, got {other:?}"),
    }
}

/// Polls `tasks/get` every `pollIntervalMs` until the task settles, printing each status.
async fn poll(peer: &Peer<RoleClient>, created: &CreateTaskResult) -> anyhow::Result<DetailedTask> {
    let interval = Duration::from_millis(created.task.poll_interval_ms.unwrap_or(1000));
    loop {
        let params = GetTaskParams::new(created.task.task_id.clone());
        let task = peer.get_task(params).await?.task;
        println!("request: tasks/get: status {}", json!(task.status()));
        if task.status().is_terminal() {
            return Ok(task);
        }
        tokio::time::sleep(interval).await;
    }
}
