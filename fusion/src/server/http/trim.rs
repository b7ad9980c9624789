//! Giving the memory of ended sessions back to the operating system.
//!
//! glibc's malloc keeps freed memory in its arenas for reuse and returns it to the system only
//! from the top of a heap. The memory of sessions that ended after a burst is scattered
//! between blocks still in use, so it stays resident: a burst of 10,000 `initialize` requests
//! against the default cap left the server at 70 to 110 MB after every session expired, where
//! it idled at 8 MB. `malloc_trim(0)` (glibc 2.8 and later, `malloc_trim(3)`) hands every free
//! page of every arena back with `madvise`. The session store asks for one after every
//! [`TRIM_EVERY`] closed sessions and when the last live session closes, on Tokio's blocking
//! pool (a trim walks the arenas for a few milliseconds, under their locks), at most one at a
//! time. Under another allocator (musl, a `#[global_allocator]` such as jemalloc) it does
//! nothing: glibc's heap then holds next to nothing, and those allocators purge on their own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Sessions closed between two trims, at most (about 3 MB of session state).
pub(super) const TRIM_EVERY: usize = 64;

/// Counts closed sessions and trims the heap when enough have closed.
#[derive(Debug, Default)]
pub(super) struct Trimmer {
    closed: AtomicUsize,
    running: Arc<AtomicBool>,
}

impl Trimmer {
    /// Notes that a session closed, `live` sessions remaining; starts a trim when
    /// [`TRIM_EVERY`] sessions closed since the last one, or none is left. Needs a Tokio
    /// runtime (it does nothing outside one).
    pub(super) fn session_closed(&self, live: usize) {
        let closed = self.closed.fetch_add(1, Ordering::Relaxed) + 1;
        if closed < TRIM_EVERY && live > 0 {
            return;
        }
        if self.running.swap(true, Ordering::AcqRel) {
            return;
        }
        self.closed.store(0, Ordering::Relaxed);
        let running = Arc::clone(&self.running);
        let trim = move || {
            release_free_memory();
            running.store(false, Ordering::Release);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(trim)),
            Err(_) => self.running.store(false, Ordering::Release),
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn trims_after_enough_closes_or_the_last_one() {
        let trimmer = Trimmer::default();
        for _ in 0..TRIM_EVERY - 1 {
            trimmer.session_closed(10);
        }
        assert_eq!(trimmer.closed.load(Ordering::Relaxed), TRIM_EVERY - 1);
        trimmer.session_closed(10);
        assert_eq!(trimmer.closed.load(Ordering::Relaxed), 0, "a trim started");
        while trimmer.running.load(Ordering::Acquire) {
            tokio::task::yield_now().await;
        }
        trimmer.session_closed(5);
        assert_eq!(trimmer.closed.load(Ordering::Relaxed), 1);
        trimmer.session_closed(0);
        assert_eq!(
            trimmer.closed.load(Ordering::Relaxed),
            0,
            "the last session closed"
        );
    }
}
