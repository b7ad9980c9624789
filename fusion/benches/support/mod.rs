//! Timing shared by the benches' closing lines: medians of batches, and where a figure has a
//! baseline, batches of fusion's work and of the baseline alternate so machine noise hits both
//! alike.

use std::hint::black_box;
use std::time::Instant;

/// Nanoseconds per call of `f`, over a batch of `batch` calls (long enough to dwarf the clock).
pub(crate) fn ns_per_call<T>(batch: u32, mut f: impl FnMut() -> T) -> f64 {
    let start = Instant::now();
    for _ in 0..batch {
        black_box(f());
    }
    start.elapsed().as_nanos() as f64 / f64::from(batch)
}

/// The median of `samples` (sorted in place); `samples` must not be empty.
pub(crate) fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}
