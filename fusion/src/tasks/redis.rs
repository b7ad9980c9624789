//! The shared task store (feature `redis`): each task one Redis hash, changed only by Lua
//! scripts, so replicas agree on who settled a task first.

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::Duration;

use redis::Script;
use serde_json::Value;

use super::{StoreError, TaskRecord, TaskStore, millis, working_expiry_ms};
use crate::guard::redis::Link;
use crate::model::context::BoxFuture;

/// KEYS[1]: the task. ARGV: the record (JSON), its TTL in ms. A new task, working.
static CREATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
redis.call('HSET', KEYS[1], 'status', 'working', 'record', ARGV[1], 'cancel', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
",
    )
});

/// KEYS[1]: the task. ARGV: the settled record (JSON), its TTL in ms, its status. 1 when the
/// task was working and now has settled, 0 when it is gone or had settled already. Its
/// questions and answers (`q:` and `a:` fields) go.
static SETTLE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return 0 end
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  local kind = string.sub(field, 1, 2)
  if kind == 'q:' or kind == 'a:' then redis.call('HDEL', KEYS[1], field) end
end
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'record', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
",
    )
});

/// KEYS[1]: the task. ARGV: key, request (JSON), key, request, … Each question a field
/// `q:{key}` of a working task; 1 when asked, 0 when the task is gone or has settled.
static ASK: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return 0 end
for i = 1, #ARGV, 2 do
  redis.call('HSET', KEYS[1], 'q:' .. ARGV[i], ARGV[i + 1])
end
return 1
",
    )
});

/// KEYS[1]: the task. ARGV: key, response (JSON), … Each response to an outstanding question
/// `q:{key}` of a working task replaces it as `a:{key}`; any other is ignored.
static RESPOND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return 0 end
local moved = 0
for i = 1, #ARGV, 2 do
  if redis.call('HDEL', KEYS[1], 'q:' .. ARGV[i]) == 1 then
    redis.call('HSET', KEYS[1], 'a:' .. ARGV[i], ARGV[i + 1])
    moved = moved + 1
  end
end
return moved
",
    )
});

/// KEYS[1]: the task. Marks a working task's cancellation request.
static CANCEL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[1], 'status') == 'working' then
  redis.call('HSET', KEYS[1], 'cancel', '1')
end
return 1
",
    )
});

/// KEYS[1]: the task. Every field: the record, the cancellation flag, questions, answers.
static GET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
return redis.call('HGETALL', KEYS[1])
",
    )
});

/// Tasks kept in Redis, shared by server replicas: a task started on one replica is polled,
/// fetched and cancelled on any. Each task is a hash `{prefix}:{id}` that expires with the
/// task's TTL; a finished result survives a restart of every replica.
///
/// When Redis is down, unreachable or slower than [`RedisTaskStore::timeout`], a call that
/// would start a task is answered `SERVER_BUSY` (retryable) and `tasks/get` a JSON-RPC internal
/// error; nothing already stored is lost. A task whose result cannot be stored is retried
/// for a while, then logged.
pub struct RedisTaskStore {
    link: Link,
    prefix: String,
}

impl RedisTaskStore {
    /// A store at `url` (`redis://127.0.0.1:6379/0`), with key prefix `fusion:task` and a
    /// 500 ms timeout.
    ///
    /// # Errors
    /// When `url` is not a Redis URL. Connecting happens at first use.
    pub fn new(url: &str) -> Result<RedisTaskStore, redis::RedisError> {
        Ok(RedisTaskStore {
            link: Link::new(url)?,
            prefix: "fusion:task".to_owned(),
        })
    }

    /// The prefix of every key (`fusion:task` by default): replicas sharing tasks use the
    /// same one.
    pub fn prefix(mut self, prefix: impl Into<String>) -> RedisTaskStore {
        self.prefix = prefix.into();
        self
    }

    /// The longest one operation may take, connecting included (500 ms by default).
    pub fn timeout(mut self, timeout: Duration) -> RedisTaskStore {
        self.link.timeout = timeout;
        self
    }

    fn key(&self, id: &str) -> String {
        format!("{}:{id}", self.prefix)
    }

    /// Runs `script` (one of the scripts above, each hashed once for `EVALSHA`) on the task
    /// `id` with `args`, within the timeout.
    async fn run<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        id: &str,
        args: &[String],
    ) -> Result<T, StoreError> {
        let mut invocation = script.key(self.key(id));
        invocation.arg(args);
        let timeout = self.link.timeout;
        match tokio::time::timeout(timeout, self.link.invoke(&invocation)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(StoreError::Unavailable(error.to_string())),
            Err(_) => Err(StoreError::Unavailable(format!(
                "no answer within {timeout:?}"
            ))),
        }
    }
}

fn encode(record: &TaskRecord) -> Result<String, StoreError> {
    serde_json::to_string(record).map_err(|e| StoreError::Unavailable(e.to_string()))
}

impl TaskStore for RedisTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move {
            let args = [encode(&record)?, working_expiry_ms(&record).to_string()];
            self.run::<i64>(&CREATE, &record.id, &args).await.map(drop)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, StoreError>> {
        Box::pin(async move {
            let fields: Vec<(String, String)> = self.run(&GET, id, &[]).await?;
            let Some((_, record)) = fields.iter().find(|(field, _)| field == "record") else {
                return Ok(None);
            };
            let unreadable = |e: serde_json::Error| {
                StoreError::Unavailable(format!("a stored task does not parse: {e}"))
            };
            let mut record: TaskRecord = serde_json::from_str(record).map_err(unreadable)?;
            for (field, value) in &fields {
                let (kind, key) = field.split_at(field.len().min(2));
                let map = match kind {
                    "q:" => &mut record.input_requests,
                    "a:" => &mut record.input_responses,
                    _ => continue,
                };
                map.insert(
                    key.to_owned(),
                    serde_json::from_str(value).map_err(unreadable)?,
                );
            }
            record.cancel_requested |= fields
                .iter()
                .any(|(field, value)| field == "cancel" && value == "1");
            Ok(Some(record))
        })
    }

    fn settle(&self, record: TaskRecord) -> BoxFuture<'_, Result<bool, StoreError>> {
        Box::pin(async move {
            let status = match &record.state {
                super::TaskState::Working => "working",
                super::TaskState::Completed { .. } => "completed",
                super::TaskState::Failed { .. } => "failed",
                super::TaskState::Cancelled => "cancelled",
            };
            let ttl = record.ttl_ms.max(1).to_string();
            let args = [encode(&record)?, ttl, status.to_owned()];
            let settled: i64 = self.run(&SETTLE, &record.id, &args).await?;
            Ok(settled == 1)
        })
    }

    fn request_cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { self.run::<i64>(&CANCEL, id, &[]).await.map(drop) })
    }

    fn ask<'a>(
        &'a self,
        id: &'a str,
        requests: BTreeMap<String, Value>,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let asked: i64 = self.run(&ASK, id, &pairs(requests)).await?;
            Ok(asked == 1)
        })
    }

    fn respond<'a>(
        &'a self,
        id: &'a str,
        responses: BTreeMap<String, Value>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.run::<i64>(&RESPOND, id, &pairs(responses))
                .await
                .map(drop)
        })
    }
}

/// `key, JSON, key, JSON, …`: the arguments of [`ASK`] and [`RESPOND`].
fn pairs(map: BTreeMap<String, Value>) -> Vec<String> {
    (map.into_iter())
        .flat_map(|(key, value)| [key, value.to_string()])
        .collect()
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password: not shown.
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.prefix)
            .field("timeout", &millis(self.link.timeout))
            .finish_non_exhaustive()
    }
}
