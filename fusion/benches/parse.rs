//! Parsing the README's example `<tool_error>` envelope (golden vector `seed-example`)
//! with `fusion::client::parse_envelope`, next to two references: rendering the same envelope
//! (`ToolError::to_xml`) and a bare quick-xml pass over its events (the floor of any parser
//! built on that reader).
//!
//! Run: `cargo bench -p fusion --bench parse`. Besides criterion's report, the run ends with
//! one line measured side by side (interleaved batches) giving the figures and their ratios.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use fusion::ToolError;
use fusion::client::parse_envelope;
use quick_xml::Reader;
use quick_xml::events::Event;

mod support;

/// Calls per timed batch of the side-by-side line.
const BATCH: u32 = 10_000;

fn seed_example() -> ToolError {
    ToolError::not_found("No invoice with that ID")
        .suggest("List invoices first, then retry with a real ID")
        .actions(["billing.list_invoices"])
        .detail("requestedId", "inv_2026_9999")
        .retry_after(30)
}

/// The floor: every event of the envelope read, nothing built.
fn scan(xml: &str) -> usize {
    let mut reader = Reader::from_str(xml);
    let mut events = 0;
    loop {
        match reader.read_event() {
            Ok(Event::Eof) | Err(_) => return events,
            Ok(event) => {
                black_box(&event);
                events += 1;
            }
        }
    }
}

fn bench(c: &mut Criterion) {
    let xml = seed_example().to_xml();
    assert!(parse_envelope(&xml).is_ok());
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(xml.len() as u64));
    group.bench_function("parse_envelope (README example)", |b| {
        b.iter(|| parse_envelope(black_box(&xml)))
    });
    group.bench_function("floor: quick-xml events only", |b| {
        b.iter(|| scan(black_box(&xml)))
    });
    group.finish();
}

/// Interleaves batches of the three so machine noise hits them alike; reports the medians.
fn side_by_side() {
    let err = seed_example();
    let xml = err.to_xml();
    let (mut parse, mut floor, mut render) = (Vec::new(), Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        parse.push(support::ns_per_call(BATCH, || {
            parse_envelope(black_box(&xml))
        }));
        floor.push(support::ns_per_call(BATCH, || scan(black_box(&xml))));
        render.push(support::ns_per_call(BATCH, || black_box(&err).to_xml()));
    }
    let (p, f, r) = (
        support::median(&mut parse),
        support::median(&mut floor),
        support::median(&mut render),
    );
    println!(
        "side by side ({} bytes): parse_envelope {p:.0} ns, quick-xml events only {f:.0} ns \
         ({:.2}x of it), to_xml {r:.0} ns ({:.2}x of it)",
        xml.len(),
        p / f,
        p / r,
    );
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    side_by_side();
}
