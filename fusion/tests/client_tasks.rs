//! `fusion::client::Client` with task-augmented calls (MCP Tasks extension): a fusion server
//! running `#[action(task)]` actions, rmcp's client on an in-process pipe. A call made a task
//! is polled to its end and returns exactly what a direct call returns; a failed or cancelled
//! task is a protocol error; dropping the call cancels the task. A task that asks a question
//! (a scripted rmcp server: fusion's tasks never ask) gets the input handler's answer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fusion::client::{CallError, Client, RetryPolicy};
use fusion::server::Server;
use fusion::tasks::{MemoryTaskStore, Tasks};
use fusion::{ToolErrors, ToolResponse};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, CreateTaskResult, DetailedTask, ErrorCode, GetTaskParams, GetTaskResult,
    Implementation, InputRequests, ServerCapabilities, ServerConfig, Task, TaskPayload, TaskStatus,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::{ErrorData, ServerHandler, ServiceError, ServiceExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Exports of the billing system.
struct Exports;

/// The arguments of an export.
#[derive(Deserialize, JsonSchema)]
struct Export {
    /// How long the export takes, in milliseconds.
    millis: u64,
    /// The month to export, like `2026-11`.
    month: String,
}

/// Why an export fails.
#[derive(Debug, ToolErrors)]
#[tool_error(tool = Exports)]
enum ExportError {
    /// The month has no invoices.
    #[tool_error(NOT_FOUND, recovery = "Export a month that has invoices")]
    NoInvoices,
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("No invoices that month")
    }
}

#[fusion::tool]
impl Exports {
    /// Exports a month of invoices as CSV, with a warning about the format.
    #[action(task)]
    async fn export(&self, args: Export) -> Result<ToolResponse, ExportError> {
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        match args.month.as_str() {
            "1999-01" => Err(ExportError::NoInvoices),
            month => Ok(ToolResponse::text(format!("id,month\n1,{month}"))
                .with_warning(fusion::ToolError::deprecated("CSV exports are deprecated"))),
        }
    }

    /// Counts the exports made.
    #[action(read_only)]
    async fn count(&self) -> u64 {
        7
    }
}

fn server(tasks: Tasks) -> Server {
    Server::new("exports-server", "1.0.0")
        .tool(Exports)
        .tasks(tasks.poll_interval(Duration::from_millis(20)))
}

/// A connection; `tasks`: whether it declares the tasks extension itself.
async fn connect(server: Server, tasks: bool) -> RunningService<RoleClient, ClientConfig> {
    let capabilities = match tasks {
        true => ClientCapabilities::builder().enable_tasks().build(),
        false => ClientCapabilities::default(),
    };
    let config = ClientConfig::new(capabilities, Implementation::new("tasks-client", "1.0.0"));
    within(server.serve_in_process(config))
        .await
        .expect("client connects")
}

async fn within<F: std::future::IntoFuture>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .expect("answered within 20 s")
}

/// Records every task state the client reads.
fn recorder() -> (
    Arc<Mutex<Vec<Task>>>,
    impl Fn(&Task) + Send + Sync + 'static,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let hook = {
        let seen = Arc::clone(&seen);
        move |task: &Task| seen.lock().unwrap().push(task.clone())
    };
    (seen, hook)
}

#[tokio::test]
async fn a_task_returns_what_a_direct_call_returns_with_its_task_id() {
    let running = connect(server(Tasks::default()), false).await;
    let direct = Client::new(running.peer().clone());
    let (seen, hook) = recorder();
    let tasked = direct
        .clone()
        .with_tasks(ClientCapabilities::default())
        .on_task(hook);
    let arguments = json!({"millis": 120, "month": "2026-11"});

    let plain = within(direct.call("exports.export", arguments.clone()))
        .await
        .unwrap();
    assert_eq!(plain.task_id(), None, "not declared: a direct result");
    let output = within(tasked.call("exports.export", arguments))
        .await
        .unwrap();
    assert_eq!(output.text(), plain.text());
    assert_eq!(output.warnings(), plain.warnings());
    assert_eq!(output.result().content, plain.result().content);

    let seen = seen.lock().unwrap();
    let id = output.task_id().expect("ran as a task");
    assert!(seen.iter().all(|task| task.task_id == id));
    assert_eq!(seen.first().unwrap().status, TaskStatus::Working);
    assert_eq!(seen.last().unwrap().status, TaskStatus::Completed);
    assert!(seen.len() >= 2, "created, then polled: {seen:?}");
}

#[tokio::test]
async fn an_error_result_of_a_task_is_the_same_typed_failure_as_a_direct_calls() {
    let running = connect(server(Tasks::default()), false).await;
    let direct = Client::new(running.peer().clone());
    let tasked = direct.clone().with_tasks(ClientCapabilities::default());
    let arguments = json!({"millis": 1, "month": "1999-01"});

    let plain = within(direct.call("exports.export", arguments.clone()))
        .await
        .unwrap_err();
    let error = within(tasked.call("exports.export", arguments))
        .await
        .unwrap_err();
    let (plain, failure) = (plain.tool_failure().unwrap(), error.tool_failure().unwrap());
    assert_eq!(failure.flags(), plain.flags());
    assert_eq!(failure.flags().code.as_str(), "NOT_FOUND");
    assert_eq!(failure.tool_error(), plain.tool_error());
    assert_eq!(failure.decision(), plain.decision());
    assert!(failure.task_id().is_some());
    assert_eq!(plain.task_id(), None);
}

#[tokio::test]
async fn a_connection_declaring_tasks_has_its_calls_followed_without_with_tasks() {
    let running = connect(server(Tasks::default()), true).await;
    let client = Client::new(running.peer().clone());
    let output = within(client.call("exports.export", json!({"millis": 1, "month": "2026-10"})))
        .await
        .unwrap();
    assert!(output.task_id().is_some());
    assert_eq!(output.text(), Some("id,month\n1,2026-10"));
}

#[tokio::test]
async fn a_failed_task_is_the_json_rpc_error_it_carries() {
    let tasks = Tasks::new(MemoryTaskStore::default()).ttl(Duration::from_millis(200));
    let running = connect(server(tasks), false).await;
    let client = Client::new(running.peer().clone())
        .with_tasks(ClientCapabilities::default())
        .with_retry_policy(RetryPolicy::never());
    let error = within(client.call(
        "exports.export",
        json!({"millis": 10_000, "month": "2026-11"}),
    ))
    .await
    .unwrap_err();
    let CallError::Protocol(ServiceError::McpError(error)) = error else {
        panic!("a JSON-RPC error, got {error:?}")
    };
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
    assert!(error.message.contains("TTL"), "{}", error.message);
}

#[tokio::test]
async fn a_task_cancelled_elsewhere_ends_the_call_as_cancelled() {
    let running = connect(server(Tasks::default()), true).await;
    let (ids, mut created) = tokio::sync::mpsc::unbounded_channel();
    let client = Client::new(running.peer().clone()).on_task(move |task: &Task| {
        let _ = ids.send(task.task_id.clone());
    });
    let call = tokio::spawn(async move {
        client
            .call(
                "exports.export",
                json!({"millis": 10_000, "month": "2026-11"}),
            )
            .await
    });
    let id = within(created.recv()).await.unwrap();
    within(running.peer().cancel_task(CancelTaskParams::new(id)))
        .await
        .unwrap();
    let error = within(call).await.unwrap().unwrap_err();
    assert!(
        matches!(error, CallError::Protocol(ServiceError::Cancelled { .. })),
        "{error:?}"
    );
}

#[tokio::test]
async fn dropping_the_call_cancels_its_task() {
    let running = connect(server(Tasks::default()), true).await;
    let (seen, hook) = recorder();
    let client = Client::new(running.peer().clone()).on_task(hook);
    let call = client.call(
        "exports.export",
        json!({"millis": 10_000, "month": "2026-11"}),
    );
    // The deadline passes: the call's future is dropped while it polls.
    let elapsed = tokio::time::timeout(Duration::from_millis(300), call).await;
    assert!(elapsed.is_err(), "still running at the deadline");
    let id = seen.lock().unwrap()[0].task_id.clone();

    let status = within(async {
        loop {
            let task = running
                .peer()
                .get_task(GetTaskParams::new(id.clone()))
                .await;
            let status = task.expect("the task is found").task.status();
            if status.is_terminal() {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert_eq!(status, TaskStatus::Cancelled);
}

// --- a task that asks a question (fusion's tasks never do): a scripted rmcp server ----------

/// One task, `t1`, that asks `q0` until answered through `tasks/update` (and for one more
/// `tasks/get` after that, as an update is acknowledged before it is applied), then completes.
#[derive(Clone, Default)]
struct Asking {
    /// The answers of every `tasks/update`.
    updates: Arc<Mutex<Vec<serde_json::Value>>>,
    /// The `tasks/get` answered since the last update.
    reads_since_update: Arc<Mutex<u32>>,
    cancelled: Arc<Mutex<Vec<String>>>,
}

fn task(status: TaskStatus) -> Task {
    let now = "2026-07-28T00:00:00Z";
    Task::new("t1", status, now, now).with_poll_interval_ms(1)
}

impl ServerHandler for Asking {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CreateTaskResult::new(task(TaskStatus::Working)).into())
    }

    async fn get_task(
        &self,
        _request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let reads = {
            let mut reads = self.reads_since_update.lock().unwrap();
            *reads += 1;
            *reads
        };
        let payload = if !self.cancelled.lock().unwrap().is_empty() {
            TaskPayload::Cancelled
        } else if self.updates.lock().unwrap().is_empty() || reads == 1 {
            let requests = serde_json::from_value(json!({"q0": {
                "method": "elicitation/create",
                "params": {"message": "Include drafts?", "requestedSchema": {"type": "object", "properties": {}}}
            }}))
            .unwrap();
            TaskPayload::InputRequired {
                input_requests: requests,
            }
        } else {
            let result = serde_json::to_value(CallToolResult::from(ToolResponse::text("done")));
            let serde_json::Value::Object(result) = result.unwrap() else {
                unreachable!("a result is an object")
            };
            TaskPayload::Completed { result }
        };
        let detailed = DetailedTask::new(task(payload.status()), payload);
        Ok(GetTaskResult::new(detailed))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let answers = serde_json::to_value(request.input_responses).unwrap();
        self.updates.lock().unwrap().push(answers);
        *self.reads_since_update.lock().unwrap() = 0;
        Ok(())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancelled.lock().unwrap().push(request.task_id);
        Ok(())
    }
}

async fn serve(server: Asking) -> RunningService<RoleClient, ClientConfig> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    within(ClientConfig::default().serve(client_end))
        .await
        .expect("client connects")
}

#[tokio::test]
async fn a_tasks_question_goes_to_the_input_handler_once_and_back_with_tasks_update() {
    let server = Asking::default();
    let running = serve(server.clone()).await;
    let asked = Arc::new(Mutex::new(0));
    let count = Arc::clone(&asked);
    let client = Client::new(running.peer().clone())
        .with_tasks(ClientCapabilities::default())
        .with_input_handler(move |requests: InputRequests| {
            *count.lock().unwrap() += 1;
            let yes = json!({"action": "accept", "content": {}});
            std::future::ready(Some(
                requests.into_keys().map(|k| (k, yes.clone())).collect(),
            ))
        });
    let output = within(client.call("report", json!({}))).await.unwrap();
    assert_eq!(output.text(), Some("done"));
    assert_eq!(output.task_id(), Some("t1"));
    assert_eq!(*asked.lock().unwrap(), 1, "asked once, though listed twice");
    let updates = server.updates.lock().unwrap();
    assert_eq!(
        *updates,
        [json!({"q0": {"action": "accept", "content": {}}})]
    );
}

#[tokio::test]
async fn a_tasks_question_without_a_handler_cancels_the_task() {
    let server = Asking::default();
    let running = serve(server.clone()).await;
    let client = Client::new(running.peer().clone()).with_tasks(ClientCapabilities::default());
    let error = within(client.call("report", json!({}))).await.unwrap_err();
    assert!(
        matches!(error, CallError::Protocol(ServiceError::Cancelled { .. })),
        "{error:?}"
    );
    within(async {
        while server.cancelled.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert_eq!(*server.cancelled.lock().unwrap(), ["t1"]);
    assert!(server.updates.lock().unwrap().is_empty());
}
