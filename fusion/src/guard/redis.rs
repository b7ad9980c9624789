//! The shared rate-limit store (feature `redis`): the same GCRA as the in-memory limiter, run
//! atomically in Redis by a Lua script on Redis's own clock, so every replica sees one limit.

use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, Script};
use tokio::sync::Mutex;

use super::rate::RateLimit;
use super::{StoreFallback, seconds};
use crate::envelope::error::ToolError;
use crate::envelope::store::{RETRY_AFTER, Target, store_unreachable};

/// GCRA in one atomic step. KEYS[1]: the bucket. ARGV: the window and the interval between
/// slots, in microseconds. Returns 0 when the call may run (the bucket is updated), else the
/// microseconds until its slot frees. Time comes from Redis (`TIME`), so replicas whose clocks
/// disagree still share one limit.
const GCRA: &str = r"
local window = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval
local allowed_at = new_tat - window
if allowed_at > now then
  return math.ceil(allowed_at - now)
end
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
return 0
";

/// Rate-limit counts kept in Redis, for several server replicas enforcing one limit
/// ([`Guards::redis`](super::Guards::redis)). Buckets are Redis keys
/// `{prefix}:{tool or tool.action}:{key}` that expire once idle.
///
/// The store connects on first use and reconnects after a failure. When Redis is down,
/// unreachable or slower than [`RedisStore::timeout`], the call gets the configured
/// [`StoreFallback`]: refused with `SERVER_BUSY` (the default) or let through; either way the
/// failure is logged, and the envelope never shows the Redis address or error.
pub struct RedisStore {
    link: Link,
    prefix: String,
    fallback: StoreFallback,
    script: Script,
}

/// One Redis server, connected at first use and again after a failure; every command and
/// connection attempt bounded by a timeout. Shared by the rate-limit and task stores.
pub(crate) struct Link {
    client: Client,
    pub(crate) timeout: Duration,
    connection: Mutex<Option<MultiplexedConnection>>,
}

impl Link {
    pub(crate) fn new(url: &str) -> Result<Link, redis::RedisError> {
        Ok(Link {
            client: Client::open(url)?,
            timeout: Duration::from_millis(500),
            connection: Mutex::new(None),
        })
    }

    /// Runs `script` with its keys and arguments set; a failure drops the connection, so the
    /// next call connects again.
    pub(crate) async fn invoke<T: redis::FromRedisValue>(
        &self,
        script: &redis::ScriptInvocation<'_>,
    ) -> redis::RedisResult<T> {
        let mut connection = self.connection().await?;
        let result = script.invoke_async(&mut connection).await;
        if result.is_err() {
            *self.connection.lock().await = None;
        }
        result
    }

    async fn connection(&self) -> redis::RedisResult<MultiplexedConnection> {
        let mut cached = self.connection.lock().await;
        if let Some(connection) = &*cached {
            return Ok(connection.clone());
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout));
        let connection = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        *cached = Some(connection.clone());
        Ok(connection)
    }
}

impl RedisStore {
    /// A store at `url` (`redis://127.0.0.1:6379/0`), with key prefix `fusion:rate`, a
    /// 500 ms timeout and [`StoreFallback::Refuse`].
    ///
    /// # Errors
    /// When `url` is not a Redis URL. Connecting happens at the first call.
    pub fn new(url: &str) -> Result<RedisStore, redis::RedisError> {
        Ok(RedisStore {
            link: Link::new(url)?,
            prefix: "fusion:rate".to_owned(),
            fallback: StoreFallback::Refuse,
            script: Script::new(GCRA),
        })
    }

    /// The prefix of every key (`fusion:rate` by default): replicas sharing a limit use the
    /// same one.
    pub fn prefix(mut self, prefix: impl Into<String>) -> RedisStore {
        self.prefix = prefix.into();
        self
    }

    /// The longest one check may take, connecting included (500 ms by default); past it the
    /// fallback applies.
    pub fn timeout(mut self, timeout: Duration) -> RedisStore {
        self.link.timeout = timeout;
        self
    }

    /// What a call gets when Redis fails: see [`StoreFallback`].
    pub fn fallback(mut self, fallback: StoreFallback) -> RedisStore {
        self.fallback = fallback;
        self
    }

    /// The key prefix of the target `name`'s buckets.
    pub(super) fn scope(&self, name: &str) -> String {
        format!("{}:{name}", self.prefix)
    }

    /// Takes a slot of bucket `key` under `scope`: `None` when the call may run, the wait
    /// until its slot frees otherwise. A store failure becomes the fallback.
    pub(super) async fn check(
        &self,
        scope: &str,
        key: &str,
        limit: &RateLimit,
    ) -> Result<Option<Duration>, ToolError> {
        let bucket = format!("{scope}:{key}");
        let window = u64::try_from(limit.per.as_micros()).unwrap_or(u64::MAX);
        let interval = (window / u64::from(limit.calls.max(1))).max(1);
        let timeout = self.link.timeout;
        let mut invocation = self.script.key(&bucket);
        invocation.arg(window).arg(interval);
        let outcome = tokio::time::timeout(timeout, self.link.invoke::<u64>(&invocation)).await;
        let error = match outcome {
            Ok(Ok(0)) => return Ok(None),
            Ok(Ok(wait)) => return Ok(Some(Duration::from_micros(wait))),
            Ok(Err(error)) => error.to_string(),
            Err(_) => format!("no answer within {timeout:?}"),
        };
        let log = match self.fallback {
            StoreFallback::Allow => {
                "the Redis rate-limit store failed; the call runs unlimited (fallback allow)"
            }
            StoreFallback::Refuse => {
                "the Redis rate-limit store failed; the call is refused (fallback refuse)"
            }
        };
        let refusal = store_unreachable(
            Target::Guard,
            &error,
            log,
            "The rate limiter is unavailable, so the call was refused to protect the server.",
        );
        match self.fallback {
            StoreFallback::Allow => Ok(None),
            StoreFallback::Refuse => Err(refusal.suggest(format!(
                "Retry in {}; if this keeps happening, report the error id to the server's \
                 operator.",
                seconds(RETRY_AFTER)
            ))),
        }
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password: not shown.
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .field("timeout", &self.link.timeout)
            .field("fallback", &self.fallback)
            .finish_non_exhaustive()
    }
}
