//! The in-process figures of `BENCHMARKS.md` in one run, each with its target. A figure with a
//! baseline is measured side by side with it: batches of the two alternate, so whatever else the
//! machine does hits both alike, and the medians are compared. One line per figure: name,
//! value, unit, baseline, ratio, target.
//!
//! Run: `cargo run --release -p fusion-benches --bin perf` (about 10 seconds); add a word
//! (`-- dispatch`) to run only the figures whose key (below, in `main`) contains it. The criterion
//! benches (`cargo bench -p fusion-benches --bench runtime`, `cargo bench -p fusion --bench envelope`)
//! measure the same workloads in more depth.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

#[path = "fixtures.rs"]
mod fixtures;

/// How long each figure runs its batches.
const BUDGET: Duration = Duration::from_secs(3);

/// Measures one figure.
type Measure = fn() -> Figure;

/// What a figure must show.
enum Target {
    /// fusion's time per operation at most this many nanoseconds.
    AtMostNs(f64),
    /// fusion's time over the baseline's at most this.
    TimeRatioAtMost(f64),
    /// fusion's throughput over the baseline's at least this.
    ThroughputRatioAtLeast(f64),
}

/// One figure: fusion's median nanoseconds per operation, and its baseline's if it has one.
struct Figure {
    name: &'static str,
    fusion_ns: f64,
    baseline: Option<(&'static str, f64)>,
    target: Target,
}

impl Figure {
    fn print(&self) {
        let per_second = matches!(self.target, Target::ThroughputRatioAtLeast(_));
        let (value, unit) = if per_second {
            (1e9 / self.fusion_ns, "calls/s")
        } else {
            (self.fusion_ns, "ns/op")
        };
        let (baseline, base, ratio) = match self.baseline {
            Some((name, ns)) if per_second => {
                (name, format!("{:.1}", 1e9 / ns), ns / self.fusion_ns)
            }
            Some((name, ns)) => (name, format!("{ns:.1}"), self.fusion_ns / ns),
            None => ("none (absolute)", String::new(), f64::NAN),
        };
        let (target, met) = match self.target {
            Target::AtMostNs(ns) => (format!("< {ns} ns"), self.fusion_ns < ns),
            Target::TimeRatioAtMost(r) => (format!("<= {r}x"), ratio <= r),
            Target::ThroughputRatioAtLeast(r) => (format!(">= {r}x"), ratio >= r),
        };
        let ratio = if ratio.is_nan() {
            "-".to_owned()
        } else {
            format!("{ratio:.2}x")
        };
        println!(
            "{:<24} {value:>10.1} {unit:<7} | {baseline:<26} {base:>10} | {ratio:>5} | target {target}: {}",
            self.name,
            if met { "met" } else { "MISSED" }
        );
    }
}

/// Runs `batch` (which does the operation `n` times) for [`BUDGET`] after one warm-up batch;
/// returns the median nanoseconds per operation.
fn alone(n: u32, mut batch: impl FnMut(u32)) -> f64 {
    let mut time = || {
        let start = Instant::now();
        batch(n);
        start.elapsed().as_nanos() as f64 / f64::from(n)
    };
    time();
    let mut samples = Vec::new();
    let deadline = Instant::now() + BUDGET;
    while Instant::now() < deadline {
        samples.push(time());
    }
    median(&mut samples)
}

/// Alternates batches of `fusion` and `baseline` for [`BUDGET`]; before each batch, untimed,
/// `prepare(n)` makes what a batch of `n` operations consumes (their inputs). Returns the median
/// nanoseconds per operation of each.
fn side_by_side<P>(
    n: u32,
    mut prepare: impl FnMut(u32) -> P,
    mut fusion: impl FnMut(P),
    mut baseline: impl FnMut(P),
) -> (f64, f64) {
    let mut time = |f: &mut dyn FnMut(P)| {
        let prepared = prepare(n);
        let start = Instant::now();
        f(prepared);
        start.elapsed().as_nanos() as f64 / f64::from(n)
    };
    // Warm caches, allocators and lazily built validators before measuring.
    time(&mut fusion);
    time(&mut baseline);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + BUDGET;
    while Instant::now() < deadline {
        a.push(time(&mut fusion));
        b.push(time(&mut baseline));
    }
    (median(&mut a), median(&mut b))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Rendering the seed's `<tool_error>` envelope: an absolute figure, since nothing else renders
/// the same envelope; 100 ns leaves it invisible next to any call that produces it.
fn envelope() -> Figure {
    let err = fixtures::seed_error();
    let ns = alone(10_000, |n| {
        (0..n).for_each(|_| drop(black_box(black_box(&err).to_xml())))
    });
    Figure {
        name: "envelope: to_xml (seed)",
        fusion_ns: ns,
        baseline: None,
        target: Target::AtMostNs(100.0),
    }
}

/// fusion's dispatch of one deposit against a hand-written tool that checks the arguments
/// against the action's JSON Schema as fusion does. Each call gets its own copy of the
/// arguments on both sides, made before the clock starts (the arguments object is the input;
/// copying it is not part of the work), in batches of 256, small enough that the copies stay in
/// cache, as a request's arguments just parsed are.
fn dispatch() -> Figure {
    let tool = std::sync::Arc::new(fixtures::Accounts);
    let schema = fixtures::deposit_validator();
    let arguments = fixtures::deposit_arguments();
    assert!(!fixtures::fusion_dispatch(&tool, arguments.clone()).is_error());
    assert!(fixtures::validating_dispatch(&schema, arguments.clone()).is_ok());
    let copies =
        |n: u32| -> Vec<Map<String, Value>> { (0..n).map(|_| arguments.clone()).collect() };
    let (f, b) = side_by_side(
        256,
        copies,
        |inputs| {
            for input in inputs {
                drop(black_box(fixtures::fusion_dispatch(
                    &tool,
                    black_box(input),
                )));
            }
        },
        |inputs| {
            for input in inputs {
                drop(black_box(fixtures::validating_dispatch(
                    &schema,
                    black_box(input),
                )));
            }
        },
    );
    Figure {
        name: "dispatch: one action",
        fusion_ns: f,
        baseline: Some(("serde_json+jsonschema+match", b)),
        target: Target::TimeRatioAtMost(1.5),
    }
}

/// `tools/call` round trips through rmcp's client and in-process transport, fusion's server
/// against the same tool served by rmcp's own `#[tool_router]`.
fn end_to_end() -> Figure {
    // One thread for both sides: a shared 2-core machine then adds the least scheduling noise.
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
    let calls = |client: &fixtures::Client, n: u32| {
        runtime.block_on(async {
            for _ in 0..n {
                fixtures::call_add(client).await;
            }
        })
    };
    let (f, b) = side_by_side(100, |n| n, |n| calls(&fusion, n), |n| calls(&rmcp, n));
    runtime.block_on(async {
        let _ = fusion.cancel().await;
        let _ = rmcp.cancel().await;
    });
    Figure {
        name: "end to end: tools/call",
        fusion_ns: f,
        baseline: Some(("rmcp #[tool_router] tool", b)),
        target: Target::ThroughputRatioAtLeast(0.95),
    }
}

fn main() {
    if cfg!(debug_assertions) {
        eprintln!("perf: built without optimizations; run with --release for real figures");
    }
    println!(
        "{:<24} {:>10} {:<7} | {:<26} {:>10} | ratio (fusion / baseline)",
        "figure", "fusion", "unit", "baseline", "baseline"
    );
    let only = std::env::args().nth(1).unwrap_or_default();
    let figures: [(&str, Measure); 3] = [
        ("envelope", envelope),
        ("dispatch", dispatch),
        ("end to end", end_to_end),
    ];
    for (key, figure) in figures {
        if key.contains(only.as_str()) {
            figure().print();
        }
    }
}
