//! The retry policy: retry, escalate or abort, decided from the typed flags only.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::envelope::code::{ErrorCategory, Severity};
use crate::envelope::flags::Flags;

/// What to do after a failed call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// Wait `wait`, then send the same call again.
    Retry {
        /// How long to wait.
        wait: Duration,
    },
    /// Do not retry: credentials are missing or insufficient (category auth). Surface the
    /// error to whoever can sign in or grant access.
    Escalate,
    /// Do not retry.
    Abort(AbortReason),
}

impl Decision {
    /// A short name for logs: `retry`, `escalate` or `abort`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Retry { .. } => "retry",
            Decision::Escalate => "escalate",
            Decision::Abort(_) => "abort",
        }
    }

    /// The wait of a [`Decision::Retry`].
    pub fn wait(&self) -> Option<Duration> {
        match self {
            Decision::Retry { wait } => Some(*wait),
            _ => None,
        }
    }
}

impl fmt::Display for Decision {
    /// `retry after 1500ms`, `retry after 2s`, `escalate`, `abort: not retryable (validation)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Retry { wait } => write!(f, "retry after {}", Millis(*wait)),
            Decision::Escalate => f.write_str("escalate"),
            Decision::Abort(reason) => write!(f, "abort: {reason}"),
        }
    }
}

/// A duration for logs: `2s` when whole seconds, else rounded to milliseconds (`232ms`).
struct Millis(Duration);

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.subsec_nanos() == 0 {
            write!(f, "{}s", self.0.as_secs())
        } else {
            write!(f, "{}ms", (self.0.as_nanos() + 500_000) / 1_000_000)
        }
    }
}

/// Why a [`RetryPolicy`] gave up on a call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AbortReason {
    /// The category is validation, not_found or unknown: the same call fails the same way
    /// (fix the arguments, pick another entity, or look at the log).
    Category(ErrorCategory),
    /// The flags say `isRetryable: false` although the category would allow a retry.
    NotRetryable,
    /// The severity is `critical`: failed, must not be retried blindly. See
    /// [`RetryPolicy::retry_critical`].
    Critical,
    /// The call was tried [`RetryPolicy::max_attempts`] times.
    AttemptsExhausted,
    /// Waiting `wait` more would exceed [`RetryPolicy::max_total_delay`].
    DelayBudgetExhausted {
        /// The wait that did not fit.
        wait: Duration,
    },
}

impl fmt::Display for AbortReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AbortReason::Category(category) => write!(f, "not retryable ({category})"),
            AbortReason::NotRetryable => f.write_str("not retryable (isRetryable: false)"),
            AbortReason::Critical => f.write_str("critical severity"),
            AbortReason::AttemptsExhausted => f.write_str("attempts exhausted"),
            AbortReason::DelayBudgetExhausted { wait } => write!(
                f,
                "waiting {} more would exceed the total delay budget",
                Millis(*wait)
            ),
        }
    }
}

/// One decision, as the hook of [`RetryPolicy::on_decision`] sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct RetryEvent<'a> {
    /// The name called, as given to the client (`billing.charge`).
    pub name: &'a str,
    /// Which attempt failed, from 1.
    pub attempt: u32,
    /// The flags of the failure.
    pub flags: &'a Flags,
    /// What the policy decided.
    pub decision: &'a Decision,
    /// The waits of this call so far, before this decision.
    pub waited: Duration,
}

impl<'a> RetryEvent<'a> {
    /// An event: attempt `attempt` (from 1) of the call of `name` failed with `flags`, and the
    /// policy decided `decision` after `waited` of waiting on this call.
    pub fn new(
        name: &'a str,
        attempt: u32,
        flags: &'a Flags,
        decision: &'a Decision,
        waited: Duration,
    ) -> RetryEvent<'a> {
        RetryEvent {
            name,
            attempt,
            flags,
            decision,
            waited,
        }
    }
}

type Hook = Arc<dyn Fn(&RetryEvent<'_>) + Send + Sync>;

/// Where jitter comes from: a seedable generator, or a function (for tests).
type Draw = Box<dyn FnMut() -> f64 + Send>;

/// The client's retry policy, decided from [`Flags`] only, never from the
/// message or `explanation`:
///
/// | flags | decision |
/// |---|---|
/// | category auth | [`Decision::Escalate`]: never retried |
/// | category validation, not_found or unknown | [`AbortReason::Category`]: never retried |
/// | `isRetryable: false` | [`AbortReason::NotRetryable`] |
/// | severity critical | [`AbortReason::Critical`], unless [`retry_critical`](RetryPolicy::retry_critical) |
/// | category rate_limit | wait exactly `retryAfterSeconds` (backoff when the server stated none) |
/// | category transient | exponential backoff with jitter, at least `retryAfterSeconds` when stated |
///
/// Retries stop after [`max_attempts`](RetryPolicy::max_attempts) attempts in all, or when the
/// next wait would take the sum of waits past [`max_total_delay`](RetryPolicy::max_total_delay).
///
/// The backoff before attempt `n + 1` is `base_delay · 2^(n-1)`, capped at `max_delay`, then
/// jittered down by up to the [`jitter`](RetryPolicy::jitter) fraction: with the defaults
/// (250 ms base, 8 s cap, jitter 0.5) the waits lie in (125 ms, 250 ms], (250, 500],
/// (500 ms, 1 s], …
///
/// ```
/// use std::time::Duration;
/// use fusion::client::{Decision, Flags, RetryPolicy};
/// use fusion::ToolError;
///
/// let policy = RetryPolicy::new().jitter(0.0).base_delay(Duration::from_millis(100));
/// let busy = Flags::from(&ToolError::new("SERVER_BUSY", "Busy"));
/// assert_eq!(policy.decide(&busy, 1, Duration::ZERO), Decision::Retry { wait: Duration::from_millis(100) });
/// assert_eq!(policy.decide(&busy, 2, Duration::ZERO), Decision::Retry { wait: Duration::from_millis(200) });
///
/// let limited = Flags::from(&ToolError::rate_limited("Slow down", 7));
/// assert_eq!(policy.decide(&limited, 1, Duration::ZERO), Decision::Retry { wait: Duration::from_secs(7) });
///
/// let denied = Flags::from(&ToolError::unauthorized("Sign in first"));
/// assert_eq!(policy.decide(&denied, 1, Duration::ZERO), Decision::Escalate);
/// ```
#[derive(Clone)]
pub struct RetryPolicy {
    max_attempts: u32,
    base_delay: Duration,
    max_delay: Duration,
    max_total_delay: Duration,
    jitter: f64,
    retry_critical: bool,
    source: Arc<Mutex<Draw>>,
    hook: Option<Hook>,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy::new()
    }
}

impl RetryPolicy {
    /// The defaults: 4 attempts in all, backoff from 250 ms doubling up to 8 s per wait, 30 s
    /// of waits per call at most, jitter 0.5 from a randomly seeded generator, critical errors
    /// not retried, no hook.
    pub fn new() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(8),
            max_total_delay: Duration::from_secs(30),
            jitter: 0.5,
            retry_critical: false,
            source: Arc::new(Mutex::new(rng(fastrand::Rng::new()))),
            hook: None,
        }
    }

    /// A policy that never retries (one attempt); decisions still reach the hook.
    pub fn never() -> RetryPolicy {
        RetryPolicy::new().max_attempts(1)
    }

    /// How many attempts a call gets in all, the first included (default 4; at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> RetryPolicy {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The first backoff wait (default 250 ms); each further one doubles.
    pub fn base_delay(mut self, delay: Duration) -> RetryPolicy {
        self.base_delay = delay;
        self
    }

    /// The cap of one backoff wait, before jitter (default 8 s). Does not shorten a
    /// `retryAfterSeconds` the server stated.
    pub fn max_delay(mut self, delay: Duration) -> RetryPolicy {
        self.max_delay = delay;
        self
    }

    /// The most a call may spend waiting between attempts, summed (default 30 s). A wait that
    /// would go past it is not taken: the call fails with
    /// [`AbortReason::DelayBudgetExhausted`], so a `retryAfterSeconds` of an hour is surfaced
    /// rather than slept through.
    pub fn max_total_delay(mut self, delay: Duration) -> RetryPolicy {
        self.max_total_delay = delay;
        self
    }

    /// The jitter fraction, clamped to 0..=1 (default 0.5): each backoff wait `d` becomes a
    /// value in `(d · (1 - jitter), d]`, so clients that failed together do not retry together.
    /// 0 gives exact waits. Never applied to a rate limit's `retryAfterSeconds`.
    pub fn jitter(mut self, fraction: f64) -> RetryPolicy {
        self.jitter = unit(fraction);
        self
    }

    /// Draws jitter from a generator seeded with `seed`: the same seed gives the same waits.
    pub fn jitter_seed(mut self, seed: u64) -> RetryPolicy {
        self.source = Arc::new(Mutex::new(rng(fastrand::Rng::with_seed(seed))));
        self
    }

    /// Draws jitter from `draw`, which returns values in `[0, 1)` (others are clamped): 0
    /// keeps the full backoff, values near 1 take off the whole jitter fraction.
    pub fn jitter_with(mut self, draw: impl FnMut() -> f64 + Send + 'static) -> RetryPolicy {
        self.source = Arc::new(Mutex::new(Box::new(draw)));
        self
    }

    /// Retries `critical` errors like any other (default: never; a critical error must not be
    /// retried blindly).
    pub fn retry_critical(mut self, enabled: bool) -> RetryPolicy {
        self.retry_critical = enabled;
        self
    }

    /// Calls `hook` with every decision, retries and give-ups alike, before it is acted on
    /// (for logs and metrics). Replaces an earlier hook.
    pub fn on_decision(
        mut self,
        hook: impl Fn(&RetryEvent<'_>) + Send + Sync + 'static,
    ) -> RetryPolicy {
        self.hook = Some(Arc::new(hook));
        self
    }

    /// What to do after attempt `attempt` (from 1) failed with `flags`, `waited` having been
    /// spent waiting on this call so far. Reads the flags only; draws jitter for transient
    /// errors.
    pub fn decide(&self, flags: &Flags, attempt: u32, waited: Duration) -> Decision {
        let backoff = match flags.category {
            ErrorCategory::Auth => return Decision::Escalate,
            ErrorCategory::Validation | ErrorCategory::NotFound | ErrorCategory::Unknown => {
                return Decision::Abort(AbortReason::Category(flags.category));
            }
            ErrorCategory::RateLimit => flags.retry_after().is_none(),
            ErrorCategory::Transient => true,
        };
        if !flags.retryable {
            return Decision::Abort(AbortReason::NotRetryable);
        }
        if flags.severity == Severity::Critical && !self.retry_critical {
            return Decision::Abort(AbortReason::Critical);
        }
        if attempt >= self.max_attempts {
            return Decision::Abort(AbortReason::AttemptsExhausted);
        }
        let stated = flags.retry_after().unwrap_or_default();
        let wait = if backoff {
            self.jittered(self.backoff(attempt)).max(stated)
        } else {
            stated
        };
        if waited.saturating_add(wait) > self.max_total_delay {
            return Decision::Abort(AbortReason::DelayBudgetExhausted { wait });
        }
        Decision::Retry { wait }
    }

    /// Reports a decision to the hook, if any: for retry loops other than
    /// [`Client::call`](super::Client::call)'s, which calls it for every decision.
    pub fn observe(&self, event: &RetryEvent<'_>) {
        if let Some(hook) = &self.hook {
            hook(event);
        }
    }

    /// The cap of one backoff wait ([`RetryPolicy::max_delay`]).
    #[cfg(feature = "client")]
    pub(super) fn backoff_cap(&self) -> Duration {
        self.max_delay
    }

    /// `base_delay · 2^(attempt-1)`, capped at `max_delay`.
    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u32::MAX);
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(Duration::MAX)
            .min(self.max_delay)
    }

    fn jittered(&self, delay: Duration) -> Duration {
        if self.jitter == 0.0 {
            return delay;
        }
        let draw = (self.source.lock().unwrap_or_else(PoisonError::into_inner))();
        // `mul_f64` panics when the product rounds past `Duration::MAX` (a `max_delay` of
        // `Duration::MAX` for "no cap"); the factor is at most 1, so the delay itself bounds it.
        Duration::try_from_secs_f64(delay.as_secs_f64() * (1.0 - self.jitter * unit(draw)))
            .map_or(delay, |jittered| jittered.min(delay))
    }
}

/// The draws of the generator `rng`, as a [`Draw`].
fn rng(mut rng: fastrand::Rng) -> Draw {
    Box::new(move || rng.f64())
}

/// `x` clamped to 0..=1, NaN read as 0.
fn unit(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

impl fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("max_attempts", &self.max_attempts)
            .field("base_delay", &self.base_delay)
            .field("max_delay", &self.max_delay)
            .field("max_total_delay", &self.max_total_delay)
            .field("jitter", &self.jitter)
            .field("retry_critical", &self.retry_critical)
            .field("hook", &self.hook.is_some())
            .finish_non_exhaustive()
    }
}
