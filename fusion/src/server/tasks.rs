//! Tasks on the server (MCP Tasks extension, `io.modelcontextprotocol/tasks`): a call of an
//! `#[action(task)]` action from a client that declares the extension becomes a task once the
//! call is routed, validated and admitted by the guards; the call then runs in the background
//! and its response is stored as the task's result (or, for a deferred task, the call runs as
//! a direct call until its action starts the task). `tasks/get`, `tasks/update` and
//! `tasks/cancel` read the store, so any replica sharing it answers them; the action's
//! questions to the user and their answers go through it too (`task_input`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, CreateTaskResult,
    DetailedTask, ErrorData, GetTaskResult, Task, TaskPayload, TaskStatus,
};
use rmcp::task_manager::current_timestamp;
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::task::AbortOnDropHandle;

use super::compose::Ctx;
use super::elicitor;
use super::handler::{base_context, cancelled};
use super::rounds::{self, Stopped};
use super::task_input::{self, BEFORE, DIRECT, Questions, TASK};
use super::{Inner, Server, stateless};
use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::envelope::store::without_credentials;
use crate::model::context::{CancellationToken, RequestContext};
use crate::model::definition::ActionDefinition;
use crate::model::response::ToolResponse;
use crate::runtime::call::{Admitted, noting_panics};
use crate::runtime::registry::Resolved;
use crate::tasks::{StoreError, TaskRecord, TaskState, Tasks, millis, working_expiry_ms};

/// The server's tasks: the settings, and each task this process runs.
#[derive(Default)]
pub(super) struct TaskHost {
    pub(super) settings: Tasks,
    running: Mutex<HashMap<String, Running>>,
}

/// A task this process runs: its cancellation token, and its questions to the user.
struct Running {
    token: CancellationToken,
    questions: Arc<Questions>,
}

impl TaskHost {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Server {
    /// Where tasks are kept and for how long ([`Tasks`]; by default in memory, kept an hour,
    /// polled every second). Only `#[action(task)]` actions run as tasks, and only for clients
    /// whose request declares the tasks extension (`#[action(task = required)]` actions refuse
    /// other clients with `-32021`); the server advertises the extension when a registered
    /// action may run as one.
    ///
    /// ```
    /// use std::time::Duration;
    /// use fusion::server::Server;
    /// use fusion::tasks::Tasks;
    ///
    /// let server = Server::new("exports", "1.0.0")
    ///     .tasks(Tasks::default().ttl(Duration::from_secs(600)));
    /// ```
    pub fn tasks(self, tasks: Tasks) -> Server {
        self.set(|inner| {
            inner.tasks = Arc::new(TaskHost {
                settings: tasks,
                running: Mutex::default(),
            });
        })
    }

    /// Whether a registered action may run as a task.
    pub(super) fn runs_tasks(&self) -> bool {
        (self.inner.registry.tools().iter())
            .any(|tool| (tool.definition.actions.iter()).any(ActionDefinition::may_run_as_task))
    }

    /// Whether this call becomes a task: its action may run as one and the request declares
    /// the tasks extension. The client sends no hint (a legacy `task` parameter is ignored):
    /// the server decides.
    ///
    /// # Errors
    /// The refusal of a call whose action runs only as a task (`#[action(task = required)]`)
    /// from a client that does not declare the Tasks extension: JSON-RPC `-32021`, Missing
    /// Required Client Capability (SEP-2575; HTTP 400), `data.requiredCapabilities` naming
    /// the extension (SEP-2663, "Required Capabilities").
    pub(super) fn is_task_call(
        &self,
        resolved: &Resolved,
        context: &Ctx,
    ) -> Result<bool, ErrorData> {
        let Some(action) = (resolved.declaration()).filter(|a| a.may_run_as_task()) else {
            return Ok(false);
        };
        if declares_tasks(context) {
            return Ok(true);
        }
        match action.task_required {
            true => Err(ErrorData::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            )),
            false => Ok(false),
        }
    }

    /// Starts the call as a task once the guards admit it (a deferred task's: once its action
    /// calls `RequestContext::start_task`); a call refused before that (a validation error, a
    /// guard) is answered directly, and so is a deferred task's question before its start
    /// (`input_required`) or its answer without one; a call admitted becomes a task stored
    /// before the client hears of it.
    pub(super) async fn start_task(
        &self,
        resolved: Resolved,
        request: &CallToolRequestParams,
        mut context: Ctx,
    ) -> Result<CallToolResponse, ErrorData> {
        let inner = Arc::clone(&self.inner);
        let host = &inner.tasks;
        let token = CancellationToken::new();
        let ctx = self
            .caller_context(&mut context)
            .with_cancellation(token.clone());
        let record = new_record(owner(&ctx, self), &host.settings);
        let questions = Questions::new(Arc::clone(&host.settings.store), record.id.clone());
        let deferred = resolved.declaration().is_some_and(|a| a.task_deferred);
        let exposition = resolved.exposition;
        // The call's round on the stateless revision: a deferred task's questions before its
        // start, and those of a call the store has no room for, are asked as a direct call's.
        let round = match (inner.rounds)
            .round_for(
                stateless::is_stateless_request(&context),
                request,
                &context,
                ctx.principal(),
                &resolved.arguments,
            )
            .await
        {
            Ok(round) => round,
            Err(Stopped::Protocol(error)) => return Err(error),
            Err(Stopped::Envelope(error)) => return Ok(self.refusal(error, exposition)),
        };
        let before = (round.inputs())
            .or_else(|| elicitor::for_peer(&context.peer).map(task_input::asking_client));
        let route = Arc::new(AtomicU8::new(if deferred { BEFORE } else { TASK }));
        let ctx = ctx.with_inputs(task_input::routed(before, &questions, &route));
        // The answer of the call while it runs as a direct call: its response, or its round's
        // `input_required`.
        let direct = async |call: &mut AbortOnDropHandle<_>| {
            tokio::select! {
                biased;
                () = context.ct.cancelled() => Ok(cancelled()),
                joined = call => {
                    round.give_back(&inner.rounds).await;
                    Ok(result_of(joined).into())
                }
                // A question asked as a direct call's, without an answer.
                () = round.asked() => round.input_required(&inner.rounds).await,
            }
        };
        let ready = match deferred {
            // Admitted by every check, or the refusal answered directly.
            false => {
                let admitted = tokio::select! {
                    biased;
                    () = context.ct.cancelled() => return Ok(cancelled()),
                    admitted = inner.registry.admit(resolved, ctx) => admitted,
                };
                match admitted {
                    Ok(admitted) => Ready::Admitted(Box::new(admitted)),
                    Err(refusal) => {
                        round.give_back(&inner.rounds).await;
                        return Ok(CallToolResult::from(refusal).into());
                    }
                }
            }
            // The call runs as a direct call until its action starts the task.
            true => {
                let (start, started, go_on) = task_input::deferred_start(&route);
                let runner = Arc::clone(&inner);
                let ctx = ctx.with_task_start(start);
                // Aborted if dropped before it is handed to its supervisor: a request
                // cancelled, or refused before its task exists, leaves nothing running.
                let mut call = AbortOnDropHandle::new(tokio::spawn(noting_panics(async move {
                    runner.registry.call(resolved, ctx).await
                })));
                tokio::select! {
                    biased;
                    answer = direct(&mut call) => return answer,
                    Ok(()) = started => Ready::Started(call, go_on),
                }
            }
        };
        match host.settings.store.create(record.clone()).await {
            Ok(()) => {}
            // No room for another task: the call goes on as a direct call (the extension
            // lets the server decide per request), so one caller's tasks cannot lock others out;
            // its questions are asked as a direct call's.
            Err(StoreError::Full(capacity)) => {
                tracing::warn!(target: "fusion::server", capacity, "the task store is full; the call runs as a direct call");
                route.store(DIRECT, Ordering::Release);
                return direct(&mut ready.go(&inner)).await;
            }
            Err(error) => return Ok(self.refusal(store_refusal(&error), exposition)),
        }
        // A state the call carried, unread: the task's questions are its own.
        round.give_back(&inner.rounds).await;
        let running = Running {
            token: token.clone(),
            questions: Arc::clone(&questions),
        };
        host.running().insert(record.id.clone(), running);
        let call = ready.go(&inner);
        tracing::debug!(target: "fusion::server", tool = %request.name, task = %record.id, "task started");
        let task = task_of(&record, TaskStatus::Working);
        tokio::spawn(supervise(inner, record, call.detach(), token, questions));
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    /// `tasks/get`: the task with its status, and its result once it has one.
    pub(super) async fn get_task_of(
        &self,
        id: &str,
        context: &mut Ctx,
    ) -> Result<GetTaskResult, ErrorData> {
        let record = self.find_task(id, context).await?;
        Ok(GetTaskResult::new(detailed(record)))
    }

    /// `tasks/update`: the answers to the task's outstanding questions are stored with it,
    /// and the action waiting on them goes on (at once on this replica, at the runner's next
    /// look at the store on another). A response to a question not outstanding is ignored
    /// (SEP-2663), and so are responses to a settled task; each is acknowledged. An answer
    /// that is not the result its question asks for (an `ElicitResult` for
    /// `elicitation/create`, ...) refuses the update with `-32602`, nothing stored: the
    /// question stays outstanding.
    pub(super) async fn update_task_of(
        &self,
        id: &str,
        responses: BTreeMap<String, Value>,
        context: &mut Ctx,
    ) -> Result<(), ErrorData> {
        let record = self.find_task(id, context).await?;
        if record.state.is_settled() || responses.is_empty() {
            return Ok(());
        }
        for (key, request) in &record.input_requests {
            let method = request["method"].as_str().unwrap_or_default();
            if let Some(answer) = responses.get(key)
                && !rounds::answers(method, answer)
            {
                let message = format!(
                    "inputResponses[\"{key}\"] is not a {method} result; the question is still \
                     outstanding, and nothing was stored."
                );
                return Err(ErrorData::invalid_params(message, None));
            }
        }
        let host = &self.inner.tasks;
        (host.settings.store.respond(id, responses).await).map_err(rpc_store_error)?;
        if let Some(running) = host.running().get(id) {
            running.questions.answered.notify_one();
        }
        Ok(())
    }

    /// `tasks/cancel`: the task stops at once on this replica, or at the running replica's
    /// next look at the store. A settled task stays as it is (acknowledged all the same).
    pub(super) async fn cancel_task_of(
        &self,
        id: &str,
        context: &mut Ctx,
    ) -> Result<(), ErrorData> {
        let record = self.find_task(id, context).await?;
        if record.state.is_settled() {
            return Ok(());
        }
        let host = &self.inner.tasks;
        if let Some(running) = host.running().get(id) {
            running.token.cancel();
        }
        host.settings
            .store
            .request_cancel(id)
            .await
            .map_err(rpc_store_error)
    }

    /// The task `id` when the caller owns it; the same `-32602` for a task of another caller
    /// as for one that does not exist, so ids reveal nothing.
    async fn find_task(&self, id: &str, context: &mut Ctx) -> Result<TaskRecord, ErrorData> {
        let ctx = self.caller_context(context);
        let caller = owner(&ctx, self);
        let store = &self.inner.tasks.settings.store;
        // Not the shape of an id this server makes: no need to ask the store.
        let well_formed = id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
        let found = match well_formed {
            true => store.get(id).await.map_err(rpc_store_error)?,
            false => None,
        };
        match found {
            Some(record) if record.owner == caller => Ok(record),
            _ => Err(ErrorData::invalid_params(
                format!(
                    "Failed to retrieve task: no task {}.",
                    crate::validation::sent_value(&Value::String(id.to_owned()))
                ),
                None,
            )),
        }
    }

    /// The request context of a task's call, or of a `tasks/*` request: the caller's
    /// identity and the request's `_meta`, without the request's progress, log messages or
    /// questions (the Tasks extension carries none of them).
    fn caller_context(&self, context: &mut Ctx) -> RequestContext {
        let ctx = base_context(context, self.session());
        match self.local_caller() {
            Some(principal) => ctx.with_principal(principal.clone()),
            None => ctx,
        }
    }
}

/// A task's call ready to go on once its task exists.
enum Ready {
    /// Admitted by every check; its handler has not started.
    Admitted(Box<Admitted>),
    /// A deferred task's call, running, its action waiting in `start_task` for the signal.
    Started(AbortOnDropHandle<(ToolResponse, bool)>, oneshot::Sender<()>),
}

impl Ready {
    /// The call, running in the background from now on.
    fn go(self, inner: &Arc<Inner>) -> AbortOnDropHandle<(ToolResponse, bool)> {
        match self {
            Ready::Admitted(admitted) => {
                let runner = Arc::clone(inner);
                let run = async move { runner.registry.run(*admitted).await };
                AbortOnDropHandle::new(tokio::spawn(noting_panics(run)))
            }
            Ready::Started(call, go_on) => {
                let _ = go_on.send(());
                call
            }
        }
    }
}

/// Who owns a task: the principal's subject, else the transport session, else nobody in
/// particular (an anonymous caller without a session; its task is found by id alone).
fn owner(ctx: &RequestContext, server: &Server) -> String {
    match (ctx.principal(), server.session()) {
        // Issuer and subject: `sub` is unique per issuer only (RFC 7519 section 4.1.2).
        (Some(principal), _) => format!("principal:{}", principal.identity_key()),
        (None, Some(session)) => format!("session:{session}"),
        (None, None) => String::new(),
    }
}

fn new_record(owner: String, settings: &Tasks) -> TaskRecord {
    let mut id = [0u8; 16];
    getrandom::fill(&mut id).expect("the system's random source");
    let now = current_timestamp();
    TaskRecord {
        id: id.iter().map(|b| format!("{b:02x}")).collect(),
        owner,
        created_at: now.clone(),
        updated_at: now,
        ttl_ms: millis(settings.ttl),
        poll_interval_ms: millis(settings.poll_interval),
        state: TaskState::Working,
        cancel_requested: false,
        input_requests: BTreeMap::new(),
        input_responses: BTreeMap::new(),
    }
}

/// Whether the request declares the Tasks extension (in its `_meta`, or at `initialize`).
fn declares_tasks(context: &Ctx) -> bool {
    (context.client_capabilities()).is_some_and(|capabilities| capabilities.supports_tasks())
}

/// Runs a task's call to its end: its response, a cancellation (here, or from another
/// replica through the store), or its TTL; then stores the outcome. Meanwhile it hands the
/// answers `tasks/update` stores to the action's questions. A call that panicked fails the
/// task (a JSON-RPC internal error), where a tool error completes it.
async fn supervise(
    inner: Arc<Inner>,
    mut record: TaskRecord,
    mut call: JoinHandle<(ToolResponse, bool)>,
    token: CancellationToken,
    questions: Arc<Questions>,
) {
    let settings = &inner.tasks.settings;
    let started = tokio::time::Instant::now();
    let deadline = tokio::time::sleep(settings.ttl);
    tokio::pin!(deadline);
    let mut look = tokio::time::interval(settings.poll_interval);
    look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let state = loop {
        tokio::select! {
            biased;
            joined = &mut call => break match joined {
                Ok((_, true)) => failed("The task's action failed unexpectedly.".to_owned()),
                joined => completed(result_of(joined)),
            },
            () = token.cancelled() => break TaskState::Cancelled,
            () = questions.answered.notified() => {
                if let Ok(Some(stored)) = settings.store.get(&record.id).await {
                    questions.deliver(&stored);
                }
            }
            () = &mut deadline => break failed(format!(
                "The task ran past its TTL of {} ms and was stopped.",
                record.ttl_ms
            )),
            _ = look.tick() => match settings.store.get(&record.id).await {
                Ok(Some(stored)) if stored.cancel_requested => break TaskState::Cancelled,
                Ok(Some(stored)) => questions.deliver(&stored),
                // Gone from the store (expired, or deleted): nobody can fetch a result.
                Ok(None) => break TaskState::Cancelled,
                _ => {}
            },
        }
    };
    call.abort();
    inner.tasks.running().remove(&record.id);
    record.state = state;
    record.updated_at = current_timestamp();
    settle(&inner.tasks.settings, record, started).await;
}

/// Stores a settled task, retrying a store that fails for as long as the store keeps the
/// working task (twice its TTL from creation), so an outage shorter than that loses nothing.
async fn settle(settings: &Tasks, record: TaskRecord, started: tokio::time::Instant) {
    let kept = Duration::from_millis(working_expiry_ms(&record));
    let mut wait = Duration::from_millis(250);
    loop {
        match settings.store.settle(record.clone()).await {
            Ok(_) => return,
            Err(error) if started.elapsed() + wait < kept => {
                let error = without_credentials(&error.to_string()).into_owned();
                tracing::warn!(target: "fusion::server", task = %record.id, %error, "the task's outcome could not be stored; retrying");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(8));
            }
            Err(error) => {
                let error = without_credentials(&error.to_string()).into_owned();
                tracing::error!(target: "fusion::server", task = %record.id, %error, "the task's outcome was not stored: the task store failed until the task expired");
                return;
            }
        }
    }
}

/// The answer of a call's background run. It never panics (the call path catches panics),
/// and it is aborted only once its outcome no longer matters.
fn result_of(joined: Result<(ToolResponse, bool), tokio::task::JoinError>) -> CallToolResult {
    match joined {
        Ok((response, _)) => CallToolResult::from(response),
        Err(error) => {
            tracing::error!(target: "fusion::server", %error, "a call ended without an answer");
            CallToolResult::from(ToolResponse::error(ToolError::new(
                ErrorCode::InternalError,
                "The call ended without an answer.",
            )))
        }
    }
}

fn completed(result: CallToolResult) -> TaskState {
    match serde_json::to_value(result) {
        Ok(Value::Object(result)) => TaskState::Completed { result },
        _ => failed("The task's result could not be stored.".to_owned()),
    }
}

fn failed(message: String) -> TaskState {
    let error = ErrorData::internal_error(message, None);
    let mut object = Map::new();
    object.insert("code".to_owned(), Value::from(error.code.0));
    object.insert(
        "message".to_owned(),
        Value::from(error.message.into_owned()),
    );
    TaskState::Failed { error: object }
}

fn task_of(record: &TaskRecord, status: TaskStatus) -> Task {
    Task::new(&record.id, status, &record.created_at, &record.updated_at)
        .with_ttl_ms(record.ttl_ms)
        .with_poll_interval_ms(record.poll_interval_ms)
}

fn detailed(record: TaskRecord) -> DetailedTask {
    let payload = match record.state.clone() {
        // Outstanding questions: `input_required` with them, each keyed as asked.
        TaskState::Working if !record.input_requests.is_empty() => {
            let input_requests = (record.input_requests.iter())
                .filter_map(|(key, request)| {
                    let request = serde_json::from_value(request.clone()).ok()?;
                    Some((key.clone(), request))
                })
                .collect();
            TaskPayload::InputRequired { input_requests }
        }
        TaskState::Working => TaskPayload::Working,
        TaskState::Completed { result } => TaskPayload::Completed { result },
        TaskState::Failed { error } => TaskPayload::Failed { error },
        TaskState::Cancelled => TaskPayload::Cancelled,
    };
    let mut task = task_of(&record, payload.status());
    if let TaskPayload::Failed { error } = &payload {
        task.status_message = error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned);
    }
    DetailedTask::new(task, payload)
}

/// The answer to a call when the store cannot take its task: retryable, cause logged.
fn store_refusal(error: &StoreError) -> ToolError {
    crate::envelope::store::store_unreachable(
        crate::envelope::store::Target::Server,
        &error.to_string(),
        "a task could not be stored; the call is refused",
        "The server cannot take a long-running call right now.",
    )
}

/// A store failure on `tasks/*`: JSON-RPC internal error, with the flags of `SERVER_BUSY`.
fn rpc_store_error(error: StoreError) -> ErrorData {
    let flags = store_refusal(&error).flags();
    let message = "The task store is unavailable; retry in 5 seconds.";
    ErrorData::internal_error(message, Some(flags))
}
