//! The rate limit: a keyed GCRA limiter (governor) on tokio's clock, or a shared Redis store,
//! and `RATE_LIMITED` with the whole seconds until a slot frees.

use std::fmt;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use super::key::{TrustedProxies, caller_key};
use super::{GuardRequest, Store, count, seconds, whole_seconds};
use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;

/// How calls are grouped into rate-limit buckets. The key never reaches the model: refusals
/// name the action and the limit, not whose bucket is full.
#[derive(Clone, Default)]
pub enum RateKey {
    /// One bucket per caller, identified by the transport, never by a value the request body
    /// carries (`_meta`, `clientInfo`), so a client cannot dodge its limit or spend someone
    /// else's by renaming itself. The first of:
    /// 1. the authenticated subject
    ///    ([`RequestContext::principal`](crate::RequestContext::principal): issuer and `sub`),
    ///    so every session of one user shares a bucket;
    /// 2. over HTTP, in a session or not, the client's IP address
    ///    ([`RequestContext::client_addr`](crate::RequestContext::client_addr)), an IPv6
    ///    address by its /64, read from the header trusted proxies write only behind one
    ///    ([`Guards::trusted_proxies`](super::Guards::trusted_proxies)): a client opens a new
    ///    session with each `initialize`, so a session would be a fresh bucket at will;
    /// 3. without an address, the transport session
    ///    ([`RequestContext::caller`](crate::RequestContext::caller): one stdio or in-process
    ///    connection, one client);
    /// 4. otherwise one bucket shared by every unidentified call.
    #[default]
    Caller,
    /// One bucket for every call.
    Global,
    /// One bucket per value of a function of the request (a tenant read from the principal's
    /// claims, say). Whatever it reads from the request body (`_meta`) the client chooses.
    Custom(Arc<dyn Fn(&GuardRequest<'_>) -> String + Send + Sync>),
}

impl fmt::Debug for RateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RateKey::Caller => "Caller",
            RateKey::Global => "Global",
            RateKey::Custom(_) => "Custom(..)",
        })
    }
}

/// At most `calls` calls every `per`, per key. Calls may come in a burst of
/// `calls`; after that one slot frees every `per / calls` (the GCRA, as in governor). A call
/// over the limit is answered `RATE_LIMITED` with `retry_after` = the whole seconds until its
/// slot frees (rounded up, never 0) and does not run.
#[derive(Clone, Debug)]
pub struct RateLimit {
    /// Calls allowed in a window (at least 1).
    pub calls: u32,
    /// The window.
    pub per: Duration,
    /// How calls are grouped.
    pub key: RateKey,
}

impl RateLimit {
    /// `calls` calls every `per`, for each caller (see [`RateKey::Caller`]).
    pub fn per_caller(calls: u32, per: Duration) -> RateLimit {
        RateLimit {
            calls,
            per,
            key: RateKey::Caller,
        }
    }

    /// `calls` calls every `per`, for all clients together.
    pub fn global(calls: u32, per: Duration) -> RateLimit {
        RateLimit {
            key: RateKey::Global,
            ..RateLimit::per_caller(calls, per)
        }
    }

    /// Groups calls by `key(request)` instead.
    pub fn key_by(
        mut self,
        key: impl Fn(&GuardRequest<'_>) -> String + Send + Sync + 'static,
    ) -> RateLimit {
        self.key = RateKey::Custom(Arc::new(key));
        self
    }

    /// The interval after which one slot frees.
    fn interval(&self) -> Option<Duration> {
        let calls = NonZeroU32::new(self.calls)?;
        let interval = self.per / calls.get();
        (!interval.is_zero()).then_some(interval)
    }
}

/// governor's clock on tokio's time, so a paused test clock drives the limiter too.
#[derive(Clone, Debug)]
struct TokioClock {
    start: tokio::time::Instant,
}

impl Clock for TokioClock {
    type Instant = Duration;
    fn now(&self) -> Duration {
        tokio::time::Instant::now().duration_since(self.start)
    }
}

type Keyed =
    RateLimiter<String, DefaultKeyedStateStore<String>, TokioClock, NoOpMiddleware<Duration>>;

/// One rate limit's state.
pub(super) struct Rate {
    limit: RateLimit,
    backend: Backend,
    /// Whose forwarded headers [`RateKey::Caller`] believes.
    proxies: Arc<TrustedProxies>,
}

enum Backend {
    Memory {
        limiter: Keyed,
        checks: AtomicU64,
    },
    #[cfg(feature = "redis")]
    Redis {
        store: Arc<super::RedisStore>,
        /// The bucket names' common prefix in Redis: the store's, then the target.
        scope: String,
    },
}

/// Forget idle buckets every this many checks, so a stream of one-off keys cannot grow the
/// in-memory map without bound.
const SWEEP_EVERY: u64 = 4096;

impl Rate {
    pub(super) fn new(
        name: &str,
        limit: RateLimit,
        store: &Store,
        proxies: &Arc<TrustedProxies>,
    ) -> Result<Rate, String> {
        let Some(interval) = limit.interval() else {
            return Err(format!(
                "the rate limit of `{name}` allows no call ({} calls per {:?}); use at least 1 \
                 call per window, and a window longer than the number of calls in nanoseconds",
                limit.calls, limit.per
            ));
        };
        let backend = match store {
            Store::Memory => {
                let burst = NonZeroU32::new(limit.calls).unwrap_or(NonZeroU32::MIN);
                let quota = Quota::with_period(interval)
                    .ok_or_else(|| format!("the rate limit of `{name}` has an empty window"))?
                    .allow_burst(burst);
                let clock = TokioClock {
                    start: tokio::time::Instant::now(),
                };
                Backend::Memory {
                    limiter: RateLimiter::new(quota, DefaultKeyedStateStore::default(), clock),
                    checks: AtomicU64::new(0),
                }
            }
            #[cfg(feature = "redis")]
            Store::Redis(store) => Backend::Redis {
                scope: store.scope(name),
                store: Arc::clone(store),
            },
        };
        Ok(Rate {
            limit,
            backend,
            proxies: Arc::clone(proxies),
        })
    }

    /// The bucket of `request`.
    pub(super) fn key(&self, request: &GuardRequest<'_>) -> String {
        match &self.limit.key {
            RateKey::Caller => caller_key(request.context, &self.proxies),
            RateKey::Global => String::new(),
            RateKey::Custom(key) => key(request),
        }
    }

    /// Takes a slot of `key`'s bucket, or refuses the call of `name`.
    pub(super) async fn check(&self, name: &str, key: &str) -> Result<(), ToolError> {
        let wait = match &self.backend {
            Backend::Memory { limiter, checks } => {
                if checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
                    limiter.retain_recent();
                }
                match limiter.check_key(&key.to_owned()) {
                    Ok(()) => return Ok(()),
                    Err(not_until) => not_until.wait_time_from(limiter.clock().now()),
                }
            }
            #[cfg(feature = "redis")]
            Backend::Redis { store, scope } => match store.check(scope, key, &self.limit).await? {
                None => return Ok(()),
                Some(wait) => wait,
            },
        };
        Err(self.limited(name, wait))
    }

    /// The refusal: the limit in the message, the wait in `retry_after` (whole seconds,
    /// rounded up, at least 1), never the key.
    fn limited(&self, name: &str, wait: Duration) -> ToolError {
        let retry_after = whole_seconds(wait);
        let calls = count(self.limit.calls.into(), "call");
        ToolError::new(
            ErrorCode::RateLimited,
            format!(
                "Too many calls to `{name}`: at most {calls} every {}.",
                window(self.limit.per)
            ),
        )
        .suggest(format!(
            "Wait {} before calling `{name}` again; do not retry sooner.",
            seconds(retry_after)
        ))
        .retry_after(retry_after)
    }
}

/// A window for messages: "minute", "10 seconds", "500 ms".
fn window(per: Duration) -> String {
    match (per.as_secs(), per.subsec_nanos()) {
        (0, _) => format!("{} ms", per.as_millis().max(1)),
        (60, 0) => "minute".to_owned(),
        (3600, 0) => "hour".to_owned(),
        (1, 0) => "second".to_owned(),
        (secs, 0) if secs % 3600 == 0 => format!("{} hours", secs / 3600),
        (secs, 0) if secs % 60 == 0 => format!("{} minutes", secs / 60),
        _ => seconds(whole_seconds(per)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_read_naturally() {
        assert_eq!(window(Duration::from_secs(60)), "minute");
        assert_eq!(window(Duration::from_secs(120)), "2 minutes");
        assert_eq!(window(Duration::from_secs(1)), "second");
        assert_eq!(window(Duration::from_secs(45)), "45 seconds");
        assert_eq!(window(Duration::from_millis(500)), "500 ms");
        assert_eq!(window(Duration::from_secs(7200)), "2 hours");
        assert_eq!(window(Duration::from_millis(1500)), "2 seconds");
    }

    #[test]
    fn empty_limits_are_refused_at_build() {
        let store = Store::Memory;
        let proxies = Arc::default();
        let new = |limit| Rate::new("t", limit, &store, &proxies);
        assert!(new(RateLimit::global(0, Duration::from_secs(1))).is_err());
        assert!(new(RateLimit::global(5, Duration::ZERO)).is_err());
        assert!(new(RateLimit::global(5, Duration::from_secs(1))).is_ok());
    }
}
