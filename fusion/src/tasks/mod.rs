//! Tasks: actions that run in the background while the client polls (MCP Tasks extension,
//! `io.modelcontextprotocol/tasks`, SEP-2663).
//!
//! An action declared `#[action(task)]`, called by a client whose request declares the tasks
//! extension, is answered at once with a task (`resultType: "task"`, its `taskId`,
//! `pollIntervalMs`, `ttlMs`); the client polls `tasks/get` until the task is `completed`
//! (its `result` is the `CallToolResult` a direct call would have returned, envelope and
//! `_meta` flags included), `failed` (a JSON-RPC error: the task outlived its TTL, or its
//! action panicked) or `cancelled` (`tasks/cancel`). While the action waits on a question to
//! the user the task is `input_required` (its `inputRequests`), until `tasks/update` brings
//! the answers. A call from any other client runs as a direct call, and so does a call when
//! the store is full; an `#[action(task = required)]` action refuses it (`-32021`). See [`Server::tasks`](crate::server::Server::tasks) and the
//! [tool reference](macro@crate::tool#tasks).
//!
//! Tasks are kept in a [`TaskStore`]: [`MemoryTaskStore`] (the default) for one server
//! process, [`RedisTaskStore`] (feature `redis`) for replicas behind a load balancer, which
//! then answer `tasks/get` and `tasks/cancel` for tasks any of them started.

mod memory;
#[cfg(feature = "redis")]
mod redis;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::model::context::BoxFuture;

pub use memory::MemoryTaskStore;
#[cfg(feature = "redis")]
pub use redis::RedisTaskStore;

/// How long a task and its result are kept by default: one hour from creation, and again from
/// the moment it settles.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);

/// How often a client is asked to poll by default (`pollIntervalMs`): once a second.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// One task as a store keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task id: 128 random bits, hex. Unguessable, since a task of an anonymous caller is
    /// found by its id alone.
    pub id: String,
    /// Who may see the task: the caller's principal subject, else its transport session, else
    /// empty (an anonymous caller without a session).
    pub owner: String,
    /// When the task was created and last changed (RFC 3339, UTC).
    pub created_at: String,
    /// See [`TaskRecord::created_at`].
    pub updated_at: String,
    /// How long the task is kept, in milliseconds: from creation while it runs, and again
    /// from the moment it settles.
    pub ttl_ms: u64,
    /// The polling interval suggested to the client, in milliseconds.
    pub poll_interval_ms: u64,
    /// Where the task stands, with its result once it has one.
    pub state: TaskState,
    /// Set by `tasks/cancel`; the server running the task stops it at its next look.
    pub cancel_requested: bool,
    /// The questions a working task waits on (SEP-2322 `inputRequests`), by key: each a
    /// request as JSON (`{"method": "elicitation/create", "params": {…}}`). While one is
    /// outstanding the task is `input_required`; `tasks/update` answers them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: BTreeMap<String, Value>,
    /// The answers `tasks/update` brought (`inputResponses`), by the key of their question,
    /// for the server running the task to take.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_responses: BTreeMap<String, Value>,
}

/// Where a task stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskState {
    /// The action is running.
    Working,
    /// The action answered: `result` is the MCP `CallToolResult` (an error envelope included:
    /// a tool error is a completed task with `isError: true`).
    Completed {
        /// The `CallToolResult`, as JSON.
        result: Map<String, Value>,
    },
    /// The task could not answer: `error` is a JSON-RPC error object (`code`, `message`).
    Failed {
        /// The JSON-RPC error.
        error: Map<String, Value>,
    },
    /// The task was cancelled before it answered.
    Cancelled,
}

impl TaskState {
    /// Whether the task has settled (`completed`, `failed` or `cancelled`).
    pub fn is_settled(&self) -> bool {
        !matches!(self, TaskState::Working)
    }
}

/// Why a store could not do what was asked. The server logs it and answers `SERVER_BUSY`
/// (`tools/call`) or a JSON-RPC internal error (`tasks/*`); it never shows the cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store holds as many tasks as it may.
    #[error("the task store is full ({0} tasks)")]
    Full(usize),
    /// The store did not answer, or answered with an error.
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
}

/// Where tasks are kept: one in-memory map ([`MemoryTaskStore`]) or a store shared by server
/// replicas ([`RedisTaskStore`]). A settled record is dropped `ttl_ms` after it settled; a
/// working one [`working_expiry_ms`] after creation, which outlasts the run (stopped at
/// `ttl_ms`) so that its failure can be recorded.
///
/// Only the server that started a task runs it; any server sharing the store answers
/// `tasks/get`, `tasks/update` and `tasks/cancel` for it. Implement it for another database
/// with four operations, each atomic on its own, and two more ([`TaskStore::ask`],
/// [`TaskStore::respond`]) for tasks whose actions ask the user.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new working task. Once this returns, [`TaskStore::get`] finds it (MCP: a task
    /// is not announced before it can be polled).
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>>;

    /// The task `id`, or `None` when there is none (never created, or expired).
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>>;

    /// Replaces a working task's record with `record`, which has settled; `false` when the
    /// task is gone or had already settled (the first settlement wins).
    fn settle(&self, record: TaskRecord) -> BoxFuture<'_, Result<bool, StoreError>>;

    /// Sets [`TaskRecord::cancel_requested`] on a working task; a settled or missing task is
    /// left as it is.
    fn request_cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Adds `requests` to a working task's [`TaskRecord::input_requests`] (the task is
    /// `input_required` from then until they are answered); `false` when the task is gone or
    /// has settled. The default keeps no questions: the question of a task's action fails
    /// (`CONFIRMATION_FAILED`: the user was not asked).
    fn ask<'a>(
        &'a self,
        id: &'a str,
        requests: BTreeMap<String, Value>,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let _ = (id, requests);
        Box::pin(std::future::ready(Err(StoreError::Unavailable(
            "this task store keeps no questions".to_owned(),
        ))))
    }

    /// Moves each of `responses` whose key is an outstanding question of a working task from
    /// [`TaskRecord::input_requests`] to [`TaskRecord::input_responses`]; any other key is
    /// ignored (MCP: a response to a request not outstanding is ignored), and so is a settled
    /// or missing task. The default ignores them all.
    fn respond<'a>(
        &'a self,
        id: &'a str,
        responses: BTreeMap<String, Value>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let _ = (id, responses);
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The task settings of a server ([`Server::tasks`](crate::server::Server::tasks)): where
/// tasks are kept, how long, and how often clients are asked to poll.
///
/// ```
/// use std::time::Duration;
/// use fusion::tasks::{MemoryTaskStore, Tasks};
///
/// let tasks = Tasks::new(MemoryTaskStore::with_capacity(1_000))
///     .ttl(Duration::from_secs(600))
///     .poll_interval(Duration::from_millis(500));
/// assert_eq!(tasks.ttl_duration(), Duration::from_secs(600));
/// ```
#[derive(Clone)]
pub struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
}

impl Tasks {
    /// Tasks kept in `store`, for [`DEFAULT_TASK_TTL`], polled every [`DEFAULT_POLL_INTERVAL`].
    pub fn new(store: impl TaskStore) -> Tasks {
        Tasks {
            store: Arc::new(store),
            ttl: DEFAULT_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
        }
    }

    /// How long a task is kept: from creation while it runs (a task still running then is
    /// stopped and fails), and again from the moment it settles, for the client to fetch its
    /// result. Advertised as the task's `ttlMs`.
    pub fn ttl(mut self, ttl: Duration) -> Tasks {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// The polling interval suggested to clients (`pollIntervalMs`). The server also looks
    /// for cancellations, and answers to its tasks' questions, from other replicas this often.
    pub fn poll_interval(mut self, interval: Duration) -> Tasks {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// The TTL set by [`Tasks::ttl`].
    pub fn ttl_duration(&self) -> Duration {
        self.ttl
    }
}

impl Default for Tasks {
    /// Tasks in a [`MemoryTaskStore`] of the default capacity.
    fn default() -> Tasks {
        Tasks::new(MemoryTaskStore::default())
    }
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .finish_non_exhaustive()
    }
}

/// How long a store keeps a working task, in milliseconds: twice its TTL. The server stops
/// the run at the TTL, then records the failure, which the store must still hold the task for.
pub fn working_expiry_ms(record: &TaskRecord) -> u64 {
    record.ttl_ms.saturating_mul(2).max(1)
}

/// Milliseconds of `duration`, saturating.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
