//! Task-augmented calls (MCP Tasks extension `io.modelcontextprotocol/tasks`, SEP-2663): a
//! client that declares the extension may get a task (`resultType: "task"`) instead of the
//! tool's result. The client polls `tasks/get` at the server's `pollIntervalMs` until the task
//! settles and reads the outcome as a direct call's: `completed` carries the
//! `CallToolResult`, `failed` a JSON-RPC error, `cancelled` nothing.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelTaskRequest,
    CancelledNotificationParam, ClientCapabilities, ClientRequest, CreateTaskResult, DetailedTask,
    ErrorData, GetTaskParams, GetTaskRequest, RequestMetaObject, ServerResult, TASKS_EXTENSION_ID,
    Task, TaskPayload, UpdateTaskParams, UpdateTaskRequest,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Map, Value};

use super::call::{CallOutput, Client, classify};
use super::error::CallError;

/// The shortest wait between two `tasks/get` of one task, whatever the server asks.
const MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);

/// The wait between two `tasks/get` when the server states no `pollIntervalMs`.
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

impl Client {
    /// Declares the tasks extension (`io.modelcontextprotocol/tasks`) on this client's calls,
    /// so that a server may run them as tasks. Each `tools/call`, `tasks/get`, `tasks/update`
    /// and `tasks/cancel` it sends carries `capabilities`, with the extension added, in
    /// `_meta["io.modelcontextprotocol/clientCapabilities"]`, in place of the capabilities
    /// of the connection: pass what the connection declares (its `ClientConfig`'s), or the
    /// server no longer sees the others (form elicitation, …) on these calls.
    ///
    /// Not needed when the connection itself declares the extension: a client follows every
    /// task it gets. A call made a task is followed until it settles, with `tasks/get` every
    /// `pollIntervalMs` (at least 50 ms, at most the retry policy's
    /// [`max_delay`](super::RetryPolicy::max_delay); 1 s when unstated), and returns what a
    /// direct call returns. Dropping the call's future (a `tokio::time::timeout` elapsing, a
    /// `select!` branch losing) sends `tasks/cancel`, as does an error while following it (the
    /// transport, or a question no input handler answers). The server's TTL bounds the wait.
    pub fn with_tasks(mut self, capabilities: ClientCapabilities) -> Client {
        let mut capabilities = capabilities;
        (capabilities.extensions.get_or_insert_with(Default::default))
            .insert(TASKS_EXTENSION_ID.to_owned(), Map::new());
        let mut meta = RequestMetaObject::new();
        meta.set_client_capabilities(capabilities);
        self.inner_mut().tasks.meta = Some(meta);
        self
    }

    /// Calls `hook` with the task each time its state is read: when the server creates it,
    /// then after every `tasks/get`, until it settles. The task id
    /// ([`Task::task_id`](rmcp::model::Task)) is known from the first call on: persist it to
    /// find the task again. [`CallOutput::task_id`] and
    /// [`ToolFailure::task_id`](super::ToolFailure::task_id) give it afterwards.
    pub fn on_task(mut self, hook: impl Fn(&Task) + Send + Sync + 'static) -> Client {
        self.inner_mut().tasks.hook = Some(Arc::new(hook));
        self
    }

    /// One `tools/call`, declaring the tasks extension when this client does.
    pub(super) async fn call_tool_once(
        &self,
        params: CallToolRequestParams,
    ) -> Result<CallToolResponse, CallError> {
        if self.inner().tasks.meta.is_none() {
            let peer = &self.inner().peer;
            return peer
                .call_tool_once(params)
                .await
                .map_err(CallError::Protocol);
        }
        let request = CallToolRequest::new(params);
        match self.request(ClientRequest::CallToolRequest(request)).await {
            Ok(ServerResult::CallToolResult(result)) => Ok(CallToolResponse::Complete(result)),
            Ok(ServerResult::InputRequiredResult(asked)) => {
                Ok(CallToolResponse::InputRequired(asked))
            }
            Ok(ServerResult::CreateTaskResult(created)) => Ok(CallToolResponse::Task(created)),
            Ok(_) => Err(CallError::Protocol(ServiceError::UnexpectedResponse)),
            Err(error) => Err(CallError::Protocol(error)),
        }
    }

    /// Follows the task `created` until it settles, then reads its outcome as a direct
    /// call's. `tasks/cancel` goes out if this future is dropped first.
    pub(super) async fn follow_task(
        &self,
        created: CreateTaskResult,
    ) -> Result<CallOutput, CallError> {
        let mut task = created.task;
        let client = self.clone();
        let request = CancelTaskRequest::new(CancelTaskParams::new(task.task_id.clone()));
        // `tasks/cancel` for a task still followed when this future is dropped.
        let cancel = SendOnDrop::new(async move {
            // Best effort: the caller is gone, there is no one to tell of a failure.
            let _ = client
                .request(ClientRequest::CancelTaskRequest(request))
                .await;
        });
        self.observe(&task);
        let mut answered = HashSet::new();
        let settled = loop {
            let cap = self.inner().policy.backoff_cap();
            tokio::time::sleep(poll_interval(task.poll_interval_ms, cap)).await;
            let DetailedTask {
                task: read,
                payload,
                ..
            } = self.get_task(&task.task_id).await?;
            self.observe(&read);
            task = read;
            match payload {
                TaskPayload::InputRequired { mut input_requests } => {
                    // Keys are unique over the task's life; an update is acknowledged before
                    // it is applied, so a question answered may still be listed: ask once.
                    input_requests.retain(|key, _| !answered.contains(key));
                    if input_requests.is_empty() {
                        continue;
                    }
                    answered.extend(input_requests.keys().cloned());
                    let Some(handler) = &self.inner().input else {
                        return Err(no_answers());
                    };
                    let Some(responses) = handler(input_requests).await else {
                        return Err(no_answers());
                    };
                    let update = UpdateTaskParams::new(task.task_id.clone(), responses);
                    self.update_task(update).await?;
                }
                payload if payload.status().is_terminal() => break payload,
                _ => {}
            }
        };
        cancel.disarm();
        match settled {
            TaskPayload::Completed { result } => {
                let result = serde_json::from_value(Value::Object(result))
                    .map_err(|_| CallError::Protocol(ServiceError::UnexpectedResponse))?;
                classify(result, Some(task.task_id))
            }
            TaskPayload::Failed { error } => {
                let error: ErrorData = serde_json::from_value(Value::Object(error))
                    .map_err(|_| CallError::Protocol(ServiceError::UnexpectedResponse))?;
                Err(CallError::Protocol(ServiceError::McpError(error)))
            }
            _ => Err(CallError::Protocol(ServiceError::Cancelled {
                reason: task.status_message,
            })),
        }
    }

    fn observe(&self, task: &Task) {
        if let Some(hook) = &self.inner().tasks.hook {
            hook(task);
        }
    }

    async fn get_task(&self, task_id: &str) -> Result<DetailedTask, CallError> {
        let request = GetTaskRequest::new(GetTaskParams::new(task_id.to_owned()));
        match self.request(ClientRequest::GetTaskRequest(request)).await {
            Ok(ServerResult::GetTaskResult(result)) => Ok(result.task),
            Ok(_) => Err(CallError::Protocol(ServiceError::UnexpectedResponse)),
            Err(error) => Err(CallError::Protocol(error)),
        }
    }

    async fn update_task(&self, params: UpdateTaskParams) -> Result<(), CallError> {
        let request = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(params));
        self.request(request)
            .await
            .map(drop)
            .map_err(CallError::Protocol)
    }

    /// Sends `request` with the tasks `_meta` when this client declares the extension; a
    /// dropped future sends `notifications/cancelled` for it.
    async fn request(&self, request: ClientRequest) -> Result<ServerResult, ServiceError> {
        let peer = &self.inner().peer;
        let mut options = PeerRequestOptions::no_options();
        if let Some(meta) = &self.inner().tasks.meta {
            options = options.with_meta(meta.clone());
        }
        let handle = peer.send_request_with_option(request, options).await?;
        let (peer, id) = (peer.clone(), handle.id.clone());
        let abandoned = SendOnDrop::new(async move {
            let reason = Some("the caller stopped waiting".to_owned());
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                .await;
        });
        let response = handle.await_response().await;
        abandoned.disarm();
        response
    }
}

/// The wait before the next `tasks/get`: the server's `pollIntervalMs` (1 s when unstated), at
/// most `cap` (the retry policy's longest backoff), at least 50 ms.
fn poll_interval(stated_ms: Option<u64>, cap: Duration) -> Duration {
    (stated_ms.map(Duration::from_millis))
        .unwrap_or(DEFAULT_POLL_INTERVAL)
        .min(cap)
        .max(MIN_POLL_INTERVAL)
}

/// The error of a task that asks for input no handler gives.
fn no_answers() -> CallError {
    CallError::Protocol(ServiceError::Cancelled {
        reason: Some("the task asked for input and no input handler answered".to_owned()),
    })
}

/// A message that goes out when dropped before [`SendOnDrop::disarm`]: `tasks/cancel` for a
/// task still followed, `notifications/cancelled` for a request whose answer is no longer
/// awaited.
struct SendOnDrop<F: Future<Output = ()> + Send + 'static>(Option<F>);

impl<F: Future<Output = ()> + Send + 'static> SendOnDrop<F> {
    fn new(send: F) -> SendOnDrop<F> {
        SendOnDrop(Some(send))
    }

    fn disarm(mut self) {
        self.0 = None;
    }
}

impl<F: Future<Output = ()> + Send + 'static> Drop for SendOnDrop<F> {
    fn drop(&mut self) {
        if let (Some(send), Ok(runtime)) = (self.0.take(), tokio::runtime::Handle::try_current()) {
            runtime.spawn(send);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poll_interval_is_the_servers_within_bounds() {
        let ms = Duration::from_millis;
        let cap = Duration::from_secs(8);
        assert_eq!(poll_interval(Some(300), cap), ms(300));
        assert_eq!(poll_interval(None, cap), Duration::from_secs(1));
        assert_eq!(poll_interval(Some(0), cap), ms(50), "never a busy loop");
        assert_eq!(
            poll_interval(Some(3_600_000), cap),
            cap,
            "capped by the policy"
        );
        assert_eq!(
            poll_interval(Some(500), ms(10)),
            ms(50),
            "the floor wins over the cap"
        );
    }
}
