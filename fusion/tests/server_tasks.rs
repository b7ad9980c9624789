//! Tasks (MCP Tasks extension, `io.modelcontextprotocol/tasks`) through a real rmcp client
//! over an in-process duplex stream: which calls become tasks, polling, results, failures,
//! cancellation, guards, ownership and the store's limits.

use std::time::Duration;

use fusion::auth::Principal;
use fusion::server::{Server, TASKS_META_KEY};
use fusion::tasks::{MemoryTaskStore, Tasks};
use fusion::{ToolErrors, ToolExt};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    ClientRequest, DetailedTask, ErrorCode, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::PeerRequestOptions;
#[path = "support/tasks.rs"]
mod support;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use support::{Client, connect, get, settled, within};

/// Exports of the billing system.
pub struct Exports;

/// The arguments of an export.
#[derive(Deserialize, JsonSchema)]
pub struct Export {
    /// How long the export takes, in milliseconds.
    pub millis: u64,
    /// The month to export, like `2026-11`.
    pub month: String,
}

/// Why an export fails.
#[derive(Debug, ToolErrors)]
#[tool_error(tool = Exports)]
pub enum ExportError {
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
    /// Exports a month of invoices as CSV.
    #[action(task)]
    pub async fn export(&self, args: Export) -> Result<String, ExportError> {
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        match args.month.as_str() {
            "1999-01" => Err(ExportError::NoInvoices),
            month => Ok(format!("id,month\n1,{month}")),
        }
    }

    /// Counts the exports made.
    #[action(read_only)]
    pub fn count(&self) -> u64 {
        7
    }

    /// Exports everything; takes too long for its timeout.
    #[action(task, timeout = "50ms")]
    pub async fn export_all(&self) -> String {
        tokio::time::sleep(Duration::from_secs(30)).await;
        "never".to_owned()
    }

    /// One export at a time.
    #[action(task, concurrency(max_active = 1, max_queued = 0))]
    pub async fn export_alone(&self, args: Export) -> String {
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        args.month
    }
}

fn server() -> Server {
    Server::new("exports-server", "1.0.0")
        .tool(Exports)
        .tasks(Tasks::default().poll_interval(Duration::from_millis(20)))
}

fn params(arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new("exports").with_arguments(arguments)
}

async fn send(client: &Client, arguments: Value) -> CallToolResponse {
    within(client.call_tool_once(params(arguments)))
        .await
        .expect("an answer")
}

/// The task id of a response that must be a task.
fn task_id(response: CallToolResponse) -> String {
    match response {
        CallToolResponse::Task(created) => {
            assert_eq!(created.task.status, TaskStatus::Working);
            assert_eq!(created.task.poll_interval_ms, Some(20));
            assert_eq!(created.task.ttl_ms, Some(3_600_000));
            created.task.task_id
        }
        other => panic!("expected a task, got {other:?}"),
    }
}

/// A response that must be a direct result.
fn direct(response: CallToolResponse) -> CallToolResult {
    match response {
        CallToolResponse::Complete(result) => result,
        other => panic!("expected a direct result, got {other:?}"),
    }
}

fn result_of(task: DetailedTask) -> Value {
    match task.payload {
        TaskPayload::Completed { result } => Value::Object(result),
        other => panic!("expected a completed task, got {other:?}"),
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn rpc_code(error: rmcp::ServiceError) -> ErrorCode {
    match error {
        rmcp::ServiceError::McpError(error) => error.code,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_task_completes_with_exactly_the_result_of_a_direct_call() {
    let client = connect(server(), true).await;
    let arguments = json!({"action": "export", "millis": 30, "month": "2026-11"});
    let id = task_id(send(&client, arguments.clone()).await);
    assert_eq!(id.len(), 32, "128 random bits, hex: {id}");

    let task = settled(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Completed);
    let direct = Exports
        .call(object(arguments), fusion::RequestContext::new())
        .await;
    let direct = serde_json::to_value(CallToolResult::from(direct)).unwrap();
    assert_eq!(result_of(task), direct);

    // Fetched twice: the same result.
    let again = get(&client, &id).await.unwrap();
    assert_eq!(result_of(again), direct);
}

#[tokio::test]
async fn a_failed_action_is_a_completed_task_carrying_the_envelope_and_flags() {
    let client = connect(server(), true).await;
    let arguments = json!({"action": "export", "millis": 1, "month": "1999-01"});
    let id = task_id(send(&client, arguments.clone()).await);
    let result = result_of(settled(&client, &id).await);
    assert_eq!(result["isError"], true);
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("NOT_FOUND")
    );
    assert_eq!(result["_meta"]["fusion/error"]["code"], "NOT_FOUND");
    assert_eq!(result["_meta"]["fusion/error"]["isRetryable"], false);

    // The same call from a client without the extension: the same envelope, directly.
    let plain = connect(server(), false).await;
    let result = serde_json::to_value(direct(send(&plain, arguments).await)).unwrap();
    assert_eq!(result["_meta"]["fusion/error"]["code"], "NOT_FOUND");
}

#[tokio::test]
async fn only_task_actions_of_clients_declaring_the_extension_become_tasks() {
    let client = connect(server(), true).await;
    // Not declared `task`: a direct result even for a client declaring the extension.
    let count = direct(send(&client, json!({"action": "count"})).await);
    assert_eq!(count.is_error, Some(false));

    // Declared, but the client does not declare the extension: a direct call.
    let plain = connect(server(), false).await;
    let export = json!({"action": "export", "millis": 1, "month": "2026-11"});
    let result = direct(send(&plain, export).await);
    assert_eq!(result.is_error, Some(false));
    // Nor may it poll: the extension is required for `tasks/*`.
    let error = get(&plain, "0123").await.unwrap_err();
    assert_eq!(rpc_code(error), ErrorCode(-32021));
}

#[tokio::test]
async fn a_malformed_call_is_answered_directly_and_never_becomes_a_task() {
    let client = connect(server(), true).await;
    let result = direct(send(&client, json!({"action": "export", "millis": "soon"})).await);
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("validation_error"), "{text}");
    let result = direct(send(&client, json!({"action": "exprot"})).await);
    assert_eq!(result.is_error, Some(true));
}

#[tokio::test]
async fn guards_count_task_work_and_the_timeout_bounds_the_tasks_run() {
    let client = connect(server(), true).await;
    // The timeout applies to the run: the task is created, then completes with TIMEOUT.
    let id = task_id(send(&client, json!({"action": "export_all"})).await);
    let result = result_of(settled(&client, &id).await);
    assert_eq!(result["_meta"]["fusion/error"]["code"], "TIMEOUT");

    // One export at a time: while a task holds the slot, the next call is refused at once.
    let slow = json!({"action": "export_alone", "millis": 2_000, "month": "2026-10"});
    let running = task_id(send(&client, slow.clone()).await);
    let refused = direct(send(&client, slow).await);
    let refused = serde_json::to_value(refused).unwrap();
    assert_eq!(refused["_meta"]["fusion/error"]["code"], "SERVER_BUSY");
    within(
        client
            .peer()
            .cancel_task(CancelTaskParams::new(running.clone())),
    )
    .await
    .unwrap();
    assert_eq!(
        settled(&client, &running).await.status(),
        TaskStatus::Cancelled
    );
    // The slot is free again once the cancelled task stopped.
    let quick = json!({"action": "export_alone", "millis": 1, "month": "2026-09"});
    let id = task_id(send(&client, quick).await);
    assert_eq!(settled(&client, &id).await.status(), TaskStatus::Completed);
}

#[tokio::test]
async fn cancelling_a_settled_task_leaves_its_result_and_unknown_ids_are_refused() {
    let client = connect(server(), true).await;
    let id = task_id(
        send(
            &client,
            json!({"action": "export", "millis": 1, "month": "2026-11"}),
        )
        .await,
    );
    let before = settled(&client, &id).await;
    within(client.peer().cancel_task(CancelTaskParams::new(id.clone())))
        .await
        .expect("acknowledged");
    assert_eq!(get(&client, &id).await.unwrap(), before);
    // `tasks/update` of a settled task is acknowledged, its answers ignored.
    let update = UpdateTaskParams::new(id.clone(), Default::default());
    within(client.peer().update_task(update))
        .await
        .expect("acknowledged");

    let huge = "f".repeat(100_000);
    for unknown in ["nope", "", "0123456789abcdef0123456789abcdef", &huge] {
        let error = error_json(get(&client, unknown).await.unwrap_err());
        assert_eq!(error["code"], -32602, "{unknown:.40}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.len() < 600,
            "the id is not echoed whole: {message:.80}"
        );
        let cancel = CancelTaskParams::new(unknown.to_owned());
        let error = within(client.peer().cancel_task(cancel)).await.unwrap_err();
        assert_eq!(rpc_code(error), ErrorCode::INVALID_PARAMS);
    }
}

#[tokio::test]
async fn a_task_belongs_to_its_principal_and_looks_missing_to_anyone_else() {
    let shared = server();
    let alice = connect(
        shared.clone().local_principal(Principal::new("alice")),
        true,
    )
    .await;
    let bob = connect(shared.clone().local_principal(Principal::new("bob")), true).await;
    let id = task_id(
        send(
            &alice,
            json!({"action": "export", "millis": 1, "month": "2026-11"}),
        )
        .await,
    );
    settled(&alice, &id).await;

    let theirs = get(&bob, &id).await.unwrap_err();
    let missing = get(&bob, "00000000000000000000000000000000")
        .await
        .unwrap_err();
    let (theirs, missing) = (error_json(theirs), error_json(missing));
    assert_eq!(theirs["code"], missing["code"]);
    assert_eq!(
        theirs["message"].as_str().unwrap().replace(&id, "ID"),
        missing["message"]
            .as_str()
            .unwrap()
            .replace("00000000000000000000000000000000", "ID")
    );
    let cancel = within(bob.peer().cancel_task(CancelTaskParams::new(id.clone()))).await;
    assert!(cancel.is_err());
    assert_eq!(
        get(&alice, &id).await.unwrap().status(),
        TaskStatus::Completed
    );

    // The same subject at another issuer is someone else (`sub` is unique per issuer).
    let issued = |iss: &str| {
        let claims = json!({"sub": "42", "iss": iss});
        Principal::from_claims(object(claims)).unwrap()
    };
    let mine = connect(
        shared
            .clone()
            .local_principal(issued("https://idp-a.example")),
        true,
    )
    .await;
    let theirs = connect(
        shared.local_principal(issued("https://idp-b.example")),
        true,
    )
    .await;
    let id = task_id(
        send(
            &mine,
            json!({"action": "export", "millis": 1, "month": "2026-11"}),
        )
        .await,
    );
    settled(&mine, &id).await;
    assert_eq!(
        error_json(get(&theirs, &id).await.unwrap_err())["code"],
        -32602
    );
}

fn error_json(error: rmcp::ServiceError) -> Value {
    match error {
        rmcp::ServiceError::McpError(error) => serde_json::to_value(error).unwrap(),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_task_outliving_its_ttl_fails_and_a_full_store_runs_calls_directly() {
    let tasks = Tasks::new(MemoryTaskStore::with_capacity(1))
        .ttl(Duration::from_millis(200))
        .poll_interval(Duration::from_millis(20));
    let client = connect(
        Server::new("exports-server", "1.0.0")
            .tool(Exports)
            .tasks(tasks),
        true,
    )
    .await;
    let long = json!({"action": "export", "millis": 10_000, "month": "2026-11"});
    let created = send(&client, long).await;
    let CallToolResponse::Task(created) = created else {
        panic!("a task")
    };
    let id = created.task.task_id;

    // The store holds one task: the next call runs as a direct call instead.
    let quick = json!({"action": "export", "millis": 1, "month": "2026-10"});
    let result = direct(send(&client, quick).await);
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        result.content[0].as_text().unwrap().text,
        "id,month\n1,2026-10"
    );

    let task = settled(&client, &id).await;
    assert_eq!(task.status(), TaskStatus::Failed);
    let TaskPayload::Failed { error } = task.payload else {
        panic!("failed")
    };
    assert_eq!(error["code"], -32603);
    assert!(error["message"].as_str().unwrap().contains("TTL"));
}

#[tokio::test]
async fn tools_list_and_capabilities_say_which_actions_may_run_as_tasks() {
    let client = connect(server(), true).await;
    let info = client.peer_info().expect("server info");
    assert!(info.capabilities.supports_tasks());
    let tools = within(client.list_all_tools()).await.unwrap();
    assert_eq!(
        tools[0].meta.as_ref().unwrap().get(TASKS_META_KEY),
        Some(&json!(["export", "export_all", "export_alone"]))
    );

    // A server without task actions advertises no extension.
    let plain = connect(Server::new("plain", "1.0.0"), true).await;
    assert!(!plain.peer_info().unwrap().capabilities.supports_tasks());
}

/// Work that queues, and work that starts its task late.
pub struct Queue;

#[fusion::tool]
impl Queue {
    /// One at a time, one more waiting.
    #[action(task, concurrency(max_active = 1, max_queued = 1))]
    pub async fn wait(&self, args: Export) -> String {
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        args.month
    }

    /// Starts its task twice.
    #[action(task(deferred))]
    pub async fn twice(&self, ctx: fusion::RequestContext) -> String {
        ctx.start_task().await;
        ctx.start_task().await;
        "started".to_owned()
    }
}

fn queue() -> Server {
    Server::new("queue-server", "1.0.0")
        .tool(Queue)
        .tasks(Tasks::default().poll_interval(Duration::from_millis(20)))
}

fn wait(millis: u64) -> CallToolRequestParams {
    let arguments = json!({"action": "wait", "millis": millis, "month": "2026-11"});
    CallToolRequestParams::new("queue").with_arguments(object(arguments))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_call_cancelled_while_queued_gives_its_place_back() {
    let client = connect(queue(), true).await;
    let running = task_id(within(client.call_tool_once(wait(1_500))).await.unwrap());
    // The next call waits in the queue, admitted by nothing yet: no task.
    let queued = ClientRequest::CallToolRequest(CallToolRequest::new(wait(1)));
    let handle = within(
        client
            .peer()
            .send_cancellable_request(queued, PeerRequestOptions::no_options()),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    within(handle.cancel(Some("gave up".to_owned())))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Its place is free: this one queues (rather than SERVER_BUSY), then becomes a task.
    let next = task_id(within(client.call_tool_once(wait(1))).await.unwrap());
    assert_eq!(
        settled(&client, &next).await.status(),
        TaskStatus::Completed
    );
    assert_eq!(
        settled(&client, &running).await.status(),
        TaskStatus::Completed
    );
}

#[tokio::test]
async fn a_deferred_task_started_twice_is_one_task() {
    let client = connect(queue(), true).await;
    let call =
        CallToolRequestParams::new("queue").with_arguments(object(json!({"action": "twice"})));
    let id = task_id(within(client.call_tool_once(call)).await.unwrap());
    let result = result_of(settled(&client, &id).await);
    assert_eq!(result["content"][0]["text"], "started");
}
