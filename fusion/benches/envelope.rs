//! Rendering the seed's `<tool_error>` envelope against the floor: copying the same number of
//! bytes into a fresh `String`. Target: within 3x of the floor.
//!
//! Run: `cargo bench -p fusion --bench envelope`. Besides criterion's report, the run ends with
//! one line measured side by side (interleaved batches) giving both figures and their ratio.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use fusion::ToolError;

mod support;

/// Calls per timed batch of the side-by-side line.
const BATCH: u32 = 20_000;

fn seed_example() -> ToolError {
    ToolError::not_found("No invoice with that ID")
        .suggest("List invoices first, then retry with a real ID")
        .actions(["billing.list_invoices"])
        .detail("requestedId", "inv_2026_9999")
        .retry_after(30)
}

/// The floor: one allocation of the envelope's size and one copy of its bytes.
fn floor(bytes: &str) -> String {
    let mut s = String::with_capacity(bytes.len());
    s.push_str(bytes);
    s
}

fn bench(c: &mut Criterion) {
    let err = seed_example();
    let xml = err.to_xml();
    let mut group = c.benchmark_group("envelope");
    group.throughput(Throughput::Bytes(xml.len() as u64));
    group.bench_function("to_xml (seed example)", |b| {
        b.iter(|| black_box(&err).to_xml())
    });
    group.bench_function("floor: copy the same bytes", |b| {
        b.iter(|| floor(black_box(&xml)))
    });
    let mut buf = String::with_capacity(1024);
    group.bench_function("write_xml into a reused buffer", |b| {
        b.iter(|| {
            buf.clear();
            black_box(&err).write_xml(&mut buf);
            black_box(buf.len())
        })
    });
    group.finish();
}

/// Interleaves batches of both so machine noise hits them alike; reports the medians.
fn side_by_side() {
    let err = seed_example();
    let xml = err.to_xml();
    let (mut render, mut copy) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        render.push(support::ns_per_call(BATCH, || black_box(&err).to_xml()));
        copy.push(support::ns_per_call(BATCH, || floor(black_box(&xml))));
    }
    let (r, f) = (support::median(&mut render), support::median(&mut copy));
    println!(
        "side by side: to_xml {r:.1} ns/envelope, floor {f:.1} ns/copy ({} bytes), ratio {:.2}x (target <= 3x)",
        xml.len(),
        r / f
    );
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    side_by_side();
}
