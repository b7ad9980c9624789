//! The concurrency limit: a semaphore of `max_active` slots, a bounded queue in front of it, a
//! share per caller, and `SERVER_BUSY` with an estimated `retry_after` beyond them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::key::{TrustedProxies, caller_key};
use super::{ConcurrencyLimit, count, seconds};
use crate::envelope::code::ErrorCode;
use crate::envelope::error::ToolError;
use crate::model::context::RequestContext;

/// Assumed duration of a call before any call has finished: one second.
const INITIAL_AVERAGE_MICROS: u64 = 1_000_000;

/// The longest `retry_after` a busy refusal suggests: past this the estimate is noise.
const MAX_RETRY_AFTER_SECS: u64 = 300;

/// One concurrency limit's state.
pub(super) struct Concurrency {
    limit: ConcurrencyLimit,
    slots: Arc<Semaphore>,
    /// One place per call waiting for a slot, held until it is admitted or cancelled.
    queue: Semaphore,
    /// Exponentially weighted average of handler durations, in microseconds.
    average_micros: Arc<AtomicU64>,
    /// The calls each caller has running or waiting; a caller with none has no entry.
    callers: Arc<Mutex<HashMap<String, usize>>>,
    /// Whose forwarded headers name the caller.
    proxies: Arc<TrustedProxies>,
}

/// A running call's slot; frees it (and its caller's share) on drop.
pub(super) struct Permit {
    _slot: OwnedSemaphorePermit,
    _share: Option<Share>,
    average_micros: Arc<AtomicU64>,
}

/// One call counted against its caller's share; uncounted on drop.
struct Share {
    callers: Arc<Mutex<HashMap<String, usize>>>,
    caller: String,
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut callers = self.callers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(calls) = callers.get_mut(&self.caller) {
            *calls -= 1;
            if *calls == 0 {
                callers.remove(&self.caller);
            }
        }
    }
}

impl Permit {
    /// Feeds the call's duration into the average the `retry_after` estimate uses.
    fn record(&self, took: Duration) {
        let sample = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        // Weight 1/8 for the new sample; a lost update under contention only skips a sample.
        let old = self.average_micros.load(Ordering::Relaxed);
        let new = old - old / 8 + sample / 8;
        self.average_micros.store(new, Ordering::Relaxed);
    }
}

/// The slots of one admitted call (none for a call without a concurrency limit). Its handler
/// holds them, so they are given back when the handler is gone: with an async handler's
/// future, or when a blocking handler's thread returns, which may be after the call was
/// answered `TIMEOUT`. On drop, the time they were held feeds each limit's average.
#[derive(Default)]
pub(crate) struct Slots {
    permits: Vec<Permit>,
    /// When the handler was admitted; `None` without permits.
    admitted: Option<tokio::time::Instant>,
}

impl Slots {
    pub(super) fn new(permits: Vec<Permit>) -> Slots {
        let admitted = (!permits.is_empty()).then(tokio::time::Instant::now);
        Slots { permits, admitted }
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        if let Some(admitted) = self.admitted {
            let took = admitted.elapsed();
            for permit in &self.permits {
                permit.record(took);
            }
        }
    }
}

impl Concurrency {
    pub(super) fn new(limit: ConcurrencyLimit, proxies: &Arc<TrustedProxies>) -> Concurrency {
        let limit = ConcurrencyLimit::new(limit.max_active, limit.max_queued)
            .per_caller(limit.max_per_caller);
        Concurrency {
            slots: Arc::new(Semaphore::new(limit.max_active)),
            limit,
            // More places than a semaphore counts would never fill.
            queue: Semaphore::new(limit.max_queued.min(Semaphore::MAX_PERMITS)),
            average_micros: Arc::new(AtomicU64::new(INITIAL_AVERAGE_MICROS)),
            callers: Arc::default(),
            proxies: Arc::clone(proxies),
        }
    }

    /// A slot for one call of `name`: at once when one is free, after waiting in the queue
    /// when the queue has room, else the `SERVER_BUSY` refusal. Over HTTP (the call has a
    /// client address), a caller with its share of calls running or waiting is refused at
    /// once; other transports serve one client, which may use the whole limit.
    pub(super) async fn acquire(
        &self,
        name: &str,
        context: &RequestContext,
    ) -> Result<Permit, ToolError> {
        let share = match context.client_addr() {
            Some(_) => Some(self.share(name, caller_key(context, &self.proxies))?),
            None => None,
        };
        let permit = |slot| Permit {
            _slot: slot,
            _share: share,
            average_micros: Arc::clone(&self.average_micros),
        };
        if let Ok(slot) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(permit(slot));
        }
        let Ok(_place) = self.queue.try_acquire() else {
            return Err(self.busy(name));
        };
        match Arc::clone(&self.slots).acquire_owned().await {
            Ok(slot) => Ok(permit(slot)),
            // The semaphore is never closed; answer busy rather than panic if it were.
            Err(_) => Err(self.busy(name)),
        }
    }

    /// Counts one more call of `caller`, or refuses it when the caller has its share.
    fn share(&self, name: &str, caller: String) -> Result<Share, ToolError> {
        let mut callers = self.callers.lock().unwrap_or_else(PoisonError::into_inner);
        let calls = callers.entry(caller.clone()).or_insert(0);
        if *calls >= self.limit.max_per_caller {
            let held = *calls;
            return Err(self.caller_busy(name, held));
        }
        *calls += 1;
        drop(callers);
        Ok(Share {
            callers: Arc::clone(&self.callers),
            caller,
        })
    }

    /// The refusal of a caller with `held` calls running or waiting, its share: retry once
    /// one of its own calls has been answered.
    fn caller_busy(&self, name: &str, held: usize) -> ToolError {
        let average = Duration::from_micros(self.average_micros.load(Ordering::Relaxed));
        let retry_after = super::whole_seconds(average).min(MAX_RETRY_AFTER_SECS);
        ToolError::new(
            ErrorCode::ServerBusy,
            format!(
                "You already have {} of `{name}` running or waiting, the most one caller may \
                 have.",
                count(held as u64, "call")
            ),
        )
        .suggest(format!(
            "Wait for an answer to your earlier calls before sending the next. Retry this call \
             in {}.",
            seconds(retry_after)
        ))
        .retry_after(retry_after)
    }

    /// The refusal: the capacity in the message, queue guidance in the recovery, and a
    /// `retry_after` estimated from the average call duration: the time for the running calls
    /// and the queue to drain, at least one second.
    fn busy(&self, name: &str) -> ToolError {
        let ConcurrencyLimit {
            max_active,
            max_queued,
            ..
        } = self.limit;
        let waves = (max_queued as u64)
            .saturating_add(max_active as u64)
            .div_ceil(max_active as u64);
        let average = self.average_micros.load(Ordering::Relaxed);
        let wait = Duration::from_micros(average.saturating_mul(waves));
        let retry_after = super::whole_seconds(wait).min(MAX_RETRY_AFTER_SECS);
        let queue = match max_queued {
            0 => "no calls".to_owned(),
            n => count(n as u64, "call"),
        };
        let running = count(max_active as u64, "call");
        ToolError::new(
            ErrorCode::ServerBusy,
            format!(
                "`{name}` is at capacity: {running} running and {queue} waiting, the most it \
                 takes."
            ),
        )
        .suggest(format!(
            "Send calls one at a time: wait for each answer before sending the next. Retry \
             this call in {}.",
            seconds(retry_after)
        ))
        .retry_after(retry_after)
    }
}
