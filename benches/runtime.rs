//! Criterion benches of fusion's runtime against baselines doing the same job without it:
//! in-process dispatch of one action (against a hand-written `serde_json` + `jsonschema` +
//! `match` tool) and calls end to end over rmcp's in-process duplex transport (against the same
//! tool written with rmcp's macros). Envelope rendering is in `fusion/benches/envelope.rs`.
//!
//! Run: `cargo bench -p fusion-benches --bench runtime`. For the ratios measured side by side in
//! one run, with their targets, use `cargo run --release -p fusion-benches --bin perf`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

mod fixtures;

fn dispatch(c: &mut Criterion) {
    let tool = std::sync::Arc::new(fixtures::Accounts);
    let schema = fixtures::deposit_validator();
    let arguments = fixtures::deposit_arguments();
    // The arguments object is the input: each call gets its own copy, made outside the timing
    // (`iter_batched`), on every side, in batches of 256 (as `perf` does: the copies stay in
    // cache, as a request's arguments just parsed are). The result is dropped inside the
    // timing, as a server drops it after sending.
    let copy = || arguments.clone();
    let mut group = c.benchmark_group("dispatch (one action)");
    group.bench_function("fusion: #[fusion::tool]", |b| {
        b.iter_batched(
            copy,
            |arguments| {
                drop(black_box(fixtures::fusion_dispatch(
                    &tool,
                    black_box(arguments),
                )))
            },
            BatchSize::NumIterations(256),
        )
    });
    group.bench_function("baseline: serde_json + jsonschema is_valid + match", |b| {
        b.iter_batched(
            copy,
            |arguments| {
                drop(black_box(fixtures::validating_dispatch(
                    &schema,
                    black_box(arguments),
                )))
            },
            BatchSize::NumIterations(256),
        )
    });
    group.finish();
}

fn end_to_end(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (fusion, rmcp) = runtime.block_on(async {
        (
            fixtures::fusion_client().await,
            fixtures::rmcp_client().await,
        )
    });
    let calls = |client: &fixtures::Client, n: u64| -> Duration {
        runtime.block_on(async {
            let start = Instant::now();
            for _ in 0..n {
                fixtures::call_add(client).await;
            }
            start.elapsed()
        })
    };
    let mut group = c.benchmark_group("end to end (tools/call over duplex)");
    group.throughput(criterion::Throughput::Elements(1));
    group.bench_function("fusion: Server::serve_in_process", |b| {
        b.iter_custom(|n| calls(&fusion, n))
    });
    group.bench_function("baseline: rmcp #[tool_router]", |b| {
        b.iter_custom(|n| calls(&rmcp, n))
    });
    group.finish();
    runtime.block_on(async {
        let _ = fusion.cancel().await;
        let _ = rmcp.cancel().await;
    });
}

criterion_group!(benches, dispatch, end_to_end);
criterion_main!(benches);
