//! The record of the request states taken (MCP 2026-07-28 `input_required` rounds): each is
//! taken once, in this process and, with [`Server::request_states_in_redis`], across every
//! replica sharing a Redis.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Server;
use crate::envelope::error::ToolError;

impl Server {
    /// Records the request states taken in Redis (`redis://127.0.0.1:6379/0`), so that a state
    /// is taken once across every replica sharing that Redis and
    /// [`Server::request_state_key`]; by default each process records its own, and a state
    /// replayed on another replica within its TTL would be taken again. When Redis does not
    /// answer within 500 ms, a call carrying a state is refused with `SERVER_BUSY`
    /// (retryable): a state is never taken without being recorded.
    ///
    /// # Panics
    /// When `url` is not a Redis URL. Connecting happens at first use.
    #[cfg(feature = "redis")]
    #[track_caller]
    pub fn request_states_in_redis(self, url: &str) -> Server {
        let link = match crate::guard::redis::Link::new(url) {
            Ok(link) => link,
            Err(error) => panic!("fusion::server::Server::request_states_in_redis: {error}"),
        };
        self.set(|inner| {
            let scripts = (redis::Script::new(TAKE_ONCE), redis::Script::new(RELEASE));
            let shared = Arc::new(Shared::Redis(Box::new((link, scripts.0, scripts.1))));
            inner.rounds = Arc::new(inner.rounds.recorded_in(shared));
        })
    }
}

/// KEYS[1]: a state's nonce; ARGV[1]: its TTL in ms. `OK` the first time, nil after.
#[cfg(feature = "redis")]
const TAKE_ONCE: &str = "return redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1])";

/// KEYS[1]: a state's nonce, taken but not read: free again.
#[cfg(feature = "redis")]
const RELEASE: &str = "return redis.call('DEL', KEYS[1])";

/// Where else the states taken are recorded, besides this process.
#[derive(Default)]
pub(super) enum Shared {
    /// Nowhere: this process only.
    #[default]
    Nowhere,
    /// In Redis, shared by replicas: the connection, the script that takes a state once and
    /// the one that gives an unread state back.
    #[cfg(feature = "redis")]
    Redis(Box<(crate::guard::redis::Link, redis::Script, redis::Script)>),
}

/// The states taken: by this process in every mode (so a state it took stays refused here
/// even when a Redis that lost its data has forgotten it), and in the shared record.
#[derive(Default)]
pub(super) struct TakenStates {
    pub(super) shared: Arc<Shared>,
    /// The nonces this process took, with their expiry (ms since the epoch).
    here: Mutex<HashMap<String, u64>>,
}

impl TakenStates {
    pub(super) fn new(shared: Arc<Shared>) -> TakenStates {
        TakenStates {
            shared,
            here: Mutex::default(),
        }
    }

    /// Marks the state `nonce` taken for `ttl`: `Ok(false)` when it was taken before.
    ///
    /// # Errors
    /// `SERVER_BUSY` when the shared record cannot be reached: the state is not taken.
    pub(super) async fn take(&self, nonce: &str, ttl: Duration) -> Result<bool, ToolError> {
        let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        {
            let now = now_ms();
            let mut here = self.here.lock().unwrap_or_else(PoisonError::into_inner);
            here.retain(|_, expiry| *expiry > now);
            if here
                .insert(nonce.to_owned(), now.saturating_add(ttl))
                .is_some()
            {
                return Ok(false);
            }
        }
        #[cfg(feature = "redis")]
        if let Shared::Redis(redis) = &*self.shared {
            let (link, take, _) = &**redis;
            let mut invocation = take.key(format!("fusion:request-state:{nonce}"));
            invocation.arg(ttl.max(1));
            let taken = link.invoke::<Option<String>>(&invocation);
            let error = match tokio::time::timeout(link.timeout, taken).await {
                Ok(Ok(first)) => return Ok(first.is_some()),
                Ok(Err(error)) => error.to_string(),
                Err(_) => "no answer in time".to_owned(),
            };
            self.forget_here(nonce);
            return Err(unrecorded(&error));
        }
        Ok(true)
    }

    /// Frees the state `nonce` again, here and in the shared record.
    pub(super) async fn give_back(&self, nonce: &str) {
        self.forget_here(nonce);
        #[cfg(feature = "redis")]
        if let Shared::Redis(redis) = &*self.shared {
            let (link, _, release) = &**redis;
            let invocation = release.key(format!("fusion:request-state:{nonce}"));
            let released = link.invoke::<i64>(&invocation);
            if !matches!(
                tokio::time::timeout(link.timeout, released).await,
                Ok(Ok(_))
            ) {
                tracing::info!(target: "fusion::server", "an unread requestState was not given back; the user will be asked again");
            }
        }
    }

    fn forget_here(&self, nonce: &str) {
        let mut here = self.here.lock().unwrap_or_else(PoisonError::into_inner);
        here.remove(nonce);
    }
}

/// Refusal when the record of taken states cannot be reached: retryable, cause logged.
#[cfg(feature = "redis")]
fn unrecorded(error: &str) -> ToolError {
    use crate::envelope::store::{RETRY_AFTER, Target, store_unreachable};
    store_unreachable(
        Target::Server,
        error,
        "the record of request states failed; the call is refused",
        "The server cannot check the requestState of this call right now.",
    )
    .suggest(format!(
        "Retry in {RETRY_AFTER} seconds with the same requestState and inputResponses; if the \
         state is then refused, call again without them and the user will be asked again."
    ))
}

/// Milliseconds since the epoch.
pub(super) fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(all(test, feature = "redis"))]
mod tests {
    #[test]
    fn an_unreachable_record_is_logged_without_credentials() {
        let log = crate::envelope::store::logged(|| {
            let refusal = super::unrecorded("connect redis://admin:hunter2@cache:6379: refused");
            assert_eq!(refusal.code().as_str(), "SERVER_BUSY");
        });
        assert!(log.contains("redis://[redacted]@cache:6379"), "{log}");
        assert!(!log.contains("hunter2"), "{log}");
    }
}
