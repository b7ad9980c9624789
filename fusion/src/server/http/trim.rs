//! Giving the memory of ended sessions back to the operating system.
//!
//! glibc's malloc keeps freed memory in its arenas for reuse and returns it to the system only
//! from the top of a heap. The memory of sessions that ended after a burst is scattered
//! between blocks still in use, so it stays resident: a burst of 10,000 `initialize` requests
//! against the default cap left the server at 70 to 110 MB after every session expired, where
//! it idles at 10 MB once it has served. `malloc_trim(0)` (glibc 2.8 and later,
//! `malloc_trim(3)`) hands every free page of every arena back with `madvise`.
//!
//! A store that trims (by default where fusion runs the server, `serve` and `serve_on`; when
//! mounted only with `release_memory(true)`: the heap is then the application's) asks for a
//! trim once [`TRIM_EVERY`] sessions have closed since the last request, and when the last
//! live session closes. A trim starts [`SETTLE`] after it is asked
//! for (a session closed by `DELETE` is dropped by rmcp's worker just after the store hears of
//! it), runs on Tokio's blocking pool, and never overlaps another: requests made meanwhile are
//! served by one more trim after it, so trims are at least [`SETTLE`] apart. Under another
//! allocator (musl, a `#[global_allocator]` such as jemalloc or mimalloc) the call does
//! nothing: glibc's heap then holds next to nothing, and those allocators purge on their own.
//! Outside a Tokio runtime no trim is made.
//!
//! A trim walks the whole process heap, the host application's included, each arena under its
//! lock: with glibc 2.36 on a 2-core EPYC it took about 5 ms for a 100 MB heap with half its
//! blocks freed, 110 ms for 1 GB and 430 ms for 4 GB (`benches/trim_pause.rs`). Another
//! thread's allocations waited a few milliseconds at most with glibc's defaults (an arena per
//! thread, a thread cache), and up to the whole trim with one arena and no cache. So a trim that took `t` is
//! followed by a rest of at least [`REST_FACTOR`]` x t` before the next one starts: trims take
//! at most a tenth of one thread, however large the heap and however fast sessions churn.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Sessions closed that make the store ask for a trim (about 3 MB of session state).
pub(super) const TRIM_EVERY: usize = 64;

/// How long a trim waits after it is asked for, and so the least time between two trims.
pub(super) const SETTLE: Duration = Duration::from_millis(200);

/// The least time between the end of a trim and the start of the next, in multiples of the
/// trim's own duration (the wait includes [`SETTLE`]).
pub(super) const REST_FACTOR: u32 = 9;

/// Counts closed sessions and trims the heap when enough have closed.
#[derive(Debug)]
pub(super) struct Trimmer {
    closed: AtomicUsize,
    state: Arc<State>,
}

#[derive(Debug)]
struct State {
    /// A task is serving trim requests.
    running: AtomicBool,
    /// A trim was asked for and has not started yet.
    pending: AtomicBool,
    /// What a trim does: [`release_free_memory`], or a test's probe.
    release: fn(),
}

impl Default for Trimmer {
    fn default() -> Trimmer {
        Trimmer::with_release(release_free_memory)
    }
}

impl Trimmer {
    fn with_release(release: fn()) -> Trimmer {
        Trimmer {
            closed: AtomicUsize::new(0),
            state: Arc::new(State {
                running: AtomicBool::new(false),
                pending: AtomicBool::new(false),
                release,
            }),
        }
    }

    /// Notes that a session closed, `live` sessions remaining; asks for a trim when
    /// [`TRIM_EVERY`] sessions closed since the last request, or none is left.
    pub(super) fn session_closed(&self, live: usize) {
        // One atomic step per close: counted, or counted and reset with a request, so closes
        // racing each other (two last sessions closing at once) never lose or wrap the count.
        let mut ask = false;
        let _ = self
            .closed
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |closed| {
                ask = closed + 1 >= TRIM_EVERY || live == 0;
                Some(if ask { 0 } else { closed + 1 })
            });
        if !ask {
            return;
        }
        self.state.pending.store(true, Ordering::Release);
        if self.state.running.swap(true, Ordering::AcqRel) {
            // The running task sees the request.
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.state.running.store(false, Ordering::Release);
            return;
        };
        runtime.spawn(serve_requests(Arc::clone(&self.state)));
    }
}

/// Trims until no request is pending, then lets the next request start a task again. A trim
/// serves every request made before it starts; one made while it runs gets one more trim, and
/// one made between the last check and the flag's release is checked once more, never lost.
/// After a trim the task rests (still running, so requests only mark themselves pending) until
/// the next may start, [`REST_FACTOR`] times the trim's duration after it ended.
async fn serve_requests(state: Arc<State>) {
    loop {
        while state.pending.load(Ordering::Acquire) {
            tokio::time::sleep(SETTLE).await;
            state.pending.store(false, Ordering::Release);
            let started = tokio::time::Instant::now();
            if tokio::task::spawn_blocking(state.release).await.is_err() {
                // The runtime is shutting down.
                state.running.store(false, Ordering::Release);
                return;
            }
            let rest = started.elapsed() * REST_FACTOR;
            tokio::time::sleep(rest.saturating_sub(SETTLE)).await;
        }
        state.running.store(false, Ordering::Release);
        if !state.pending.load(Ordering::Acquire) || state.running.swap(true, Ordering::AcqRel) {
            return;
        }
    }
}

/// Returns the free memory of glibc's arenas to the operating system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn release_free_memory() {
    // SAFETY: `malloc_trim` takes a size and only walks and releases malloc's own free
    // memory; it is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}

#[cfg(test)]
mod tests {
    use super::*;

    static TRIMS: AtomicUsize = AtomicUsize::new(0);

    /// A trim that takes a while, so requests arrive while it runs.
    fn counted_trim() {
        std::thread::sleep(Duration::from_millis(50));
        TRIMS.fetch_add(1, Ordering::SeqCst);
    }

    /// Waits until `n` trims have run (failing after 5 s), then a little more, to see no extra.
    async fn trims_reach(n: usize) {
        let waited = tokio::time::timeout(Duration::from_secs(5), async {
            while TRIMS.load(Ordering::SeqCst) < n {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        assert!(waited.await.is_ok(), "{n} trims expected");
        tokio::time::sleep(SETTLE * 2).await;
        assert_eq!(
            TRIMS.load(Ordering::SeqCst),
            n,
            "no more trims than asked for"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn trims_after_enough_closes_and_after_the_last_one_never_losing_a_request() {
        let trimmer = Trimmer::with_release(counted_trim);
        for _ in 0..TRIM_EVERY - 1 {
            trimmer.session_closed(100);
        }
        tokio::time::sleep(SETTLE * 2).await;
        assert_eq!(TRIMS.load(Ordering::SeqCst), 0, "63 closes ask for nothing");

        trimmer.session_closed(100);
        trims_reach(1).await;

        // The last session closes while a trim runs: one more trim follows it.
        for _ in 0..TRIM_EVERY {
            trimmer.session_closed(10);
        }
        tokio::time::sleep(SETTLE + Duration::from_millis(20)).await;
        trimmer.session_closed(0);
        trims_reach(3).await;

        // Requests made in a burst while one is pending are served by one trim.
        trimmer.session_closed(0);
        trimmer.session_closed(0);
        trimmer.session_closed(0);
        trims_reach(4).await;
    }

    static SLOW_STARTS: std::sync::Mutex<Vec<std::time::Instant>> =
        std::sync::Mutex::new(Vec::new());

    /// A trim of a large heap: 100 ms.
    fn slow_trim() {
        SLOW_STARTS.lock().unwrap().push(std::time::Instant::now());
        std::thread::sleep(Duration::from_millis(100));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_slow_trim_is_followed_by_a_rest_nine_times_as_long() {
        let trimmer = Trimmer::with_release(slow_trim);
        // Sessions churn: the last one closes every 20 ms for 2.5 s.
        let until = std::time::Instant::now() + Duration::from_millis(2500);
        while std::time::Instant::now() < until {
            trimmer.session_closed(0);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let starts = SLOW_STARTS.lock().unwrap().clone();
        assert!(starts.len() >= 2, "{} trims ran", starts.len());
        for pair in starts.windows(2) {
            // 100 ms of trim, then 900 ms of rest; without the rest, 300 ms apart.
            let apart = pair[1] - pair[0];
            assert!(apart >= Duration::from_millis(950), "trims {apart:?} apart");
        }
    }

    #[test]
    fn closes_racing_each_other_keep_the_count() {
        // Outside a runtime no trim starts; only the count is exercised.
        let trimmer = Trimmer::with_release(|| {});
        std::thread::scope(|threads| {
            for _ in 0..4 {
                threads.spawn(|| {
                    for i in 0..200_000 {
                        trimmer.session_closed(i % 2);
                    }
                });
            }
        });
        assert!(trimmer.closed.load(Ordering::Relaxed) < TRIM_EVERY);
    }
}
