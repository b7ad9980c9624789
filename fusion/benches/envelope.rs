//! Rendering the README's example `<tool_error>` envelope (golden vector `seed-example`).
//! Target: under 100 ns per envelope, absolute (nothing else renders the same envelope).
//!
//! Run: `cargo bench -p fusion --bench envelope`. Besides criterion's report, the run ends with
//! one line: the median of batches over three seconds, against the target.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use fusion::ToolError;

mod support;

/// Calls per timed batch of the closing line.
const BATCH: u32 = 20_000;

/// The target, in nanoseconds per envelope.
const TARGET_NS: f64 = 100.0;

fn seed_example() -> ToolError {
    ToolError::not_found("No invoice with that ID")
        .suggest("List invoices first, then retry with a real ID")
        .actions(["billing.list_invoices"])
        .detail("requestedId", "inv_2026_9999")
        .retry_after(30)
}

fn bench(c: &mut Criterion) {
    let err = seed_example();
    let mut group = c.benchmark_group("envelope");
    group.throughput(Throughput::Bytes(err.to_xml().len() as u64));
    group.bench_function("to_xml (README example)", |b| {
        b.iter(|| black_box(&err).to_xml())
    });
    group.finish();
}

/// The median of batches, so that a burst of load on the machine moves it little.
fn closing_line() {
    let err = seed_example();
    let mut render = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        render.push(support::ns_per_call(BATCH, || black_box(&err).to_xml()));
    }
    let ns = support::median(&mut render);
    println!(
        "to_xml (README example, {} bytes): {ns:.1} ns/envelope, median of {} batches (target < {TARGET_NS} ns: {})",
        err.to_xml().len(),
        render.len(),
        if ns < TARGET_NS { "met" } else { "MISSED" }
    );
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    closing_line();
}
