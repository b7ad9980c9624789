//! Every runtime figure of `BENCHMARKS.md` in one run, each measured side by side with its
//! baseline: batches of the two alternate, so whatever else the machine does hits both alike,
//! and the medians are compared. One line per figure: name, value, unit, baseline, ratio,
//! target.
//!
//! Run: `cargo run --release -p examples --example perf` (about 20 seconds); add a word
//! (`-- dispatch`) to run only the figures whose key (below, in `main`) contains it. The criterion
//! benches (`cargo bench -p examples`, `cargo bench -p fusion`) measure the same workloads in
//! more depth.

use std::hint::black_box;
use std::time::{Duration, Instant};

use fusion::guard::{ConcurrencyLimit, GuardSpec, RateLimit};
use fusion::testing::Tester;
use serde_json::{Map, Value};

#[path = "benches/fixtures.rs"]
mod fixtures;

/// How long each figure alternates its two sides.
const BUDGET: Duration = Duration::from_secs(3);

/// One figure: fusion's median against its baseline's, both in nanoseconds per operation.
struct Figure {
    name: &'static str,
    baseline: &'static str,
    fusion_ns: f64,
    baseline_ns: f64,
    /// How the figure is read: as time per operation, or as operations per second.
    per_second: bool,
    /// The target ratio (fusion time over baseline time at most this; for throughput, fusion
    /// throughput over baseline throughput at least this).
    target: Option<f64>,
}

impl Figure {
    fn print(&self) {
        let (value, base, unit, ratio, met) = if self.per_second {
            let (f, b) = (1e9 / self.fusion_ns, 1e9 / self.baseline_ns);
            let ratio = f / b;
            (f, b, "calls/s", ratio, self.target.map(|t| ratio >= t))
        } else {
            let ratio = self.fusion_ns / self.baseline_ns;
            (
                self.fusion_ns,
                self.baseline_ns,
                "ns/op",
                ratio,
                self.target.map(|t| ratio <= t),
            )
        };
        let target = match (self.target, met) {
            (Some(t), Some(true)) => format!(
                "target {}{t}x: met",
                if self.per_second { ">=" } else { "<=" }
            ),
            (Some(t), _) => format!(
                "target {}{t}x: MISSED",
                if self.per_second { ">=" } else { "<=" }
            ),
            (None, _) => "no target".to_owned(),
        };
        println!(
            "{:<28} {value:>12.1} {unit:<8} | {:<30} {base:>12.1} | ratio {ratio:>5.2}x | {target}",
            self.name, self.baseline
        );
    }
}

/// Alternates batches of `fusion` and `baseline` (each closure runs the operation `n` times)
/// for [`BUDGET`]; returns the median nanoseconds per operation of each.
fn side_by_side(batch: u32, fusion: impl FnMut(u32), baseline: impl FnMut(u32)) -> (f64, f64) {
    side_by_side_prepared(batch, |n| n, fusion, baseline)
}

/// [`side_by_side`] with an untimed step before each batch: `prepare(n)` makes what a batch of
/// `n` operations consumes (their inputs), and only the batch itself is timed.
fn side_by_side_prepared<P>(
    batch: u32,
    mut prepare: impl FnMut(u32) -> P,
    mut fusion: impl FnMut(P),
    mut baseline: impl FnMut(P),
) -> (f64, f64) {
    let mut time = |f: &mut dyn FnMut(P)| {
        let prepared = prepare(batch);
        let start = Instant::now();
        f(prepared);
        start.elapsed().as_nanos() as f64 / f64::from(batch)
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

/// Measures one figure.
type Measure = fn() -> Figure;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn envelope() -> Figure {
    let err = fixtures::seed_error();
    let xml = err.to_xml();
    let (f, b) = side_by_side(
        10_000,
        |n| (0..n).for_each(|_| drop(black_box(black_box(&err).to_xml()))),
        |n| (0..n).for_each(|_| drop(black_box(fixtures::floor(black_box(&xml))))),
    );
    Figure {
        name: "envelope: to_xml (seed)",
        baseline: "floor: copy the same bytes",
        fusion_ns: f,
        baseline_ns: b,
        per_second: false,
        target: Some(3.0),
    }
}

fn validation_render() -> Figure {
    let validation = fixtures::Validation::new();
    let error = validation.fusion.check(&validation.arguments);
    let xml = error.to_xml();
    let (f, b) = side_by_side(
        2_000,
        |n| (0..n).for_each(|_| drop(black_box(black_box(&error).to_xml()))),
        |n| (0..n).for_each(|_| drop(black_box(fixtures::floor(black_box(&xml))))),
    );
    Figure {
        name: "validation: render 10",
        baseline: "floor: copy the same bytes",
        fusion_ns: f,
        baseline_ns: b,
        per_second: false,
        target: None,
    }
}

fn validation_check() -> Figure {
    let validation = fixtures::Validation::new();
    let (f, b) = side_by_side(
        200,
        |n| (0..n).for_each(|_| drop(black_box(validation.render()))),
        |n| (0..n).for_each(|_| drop(black_box(validation.baseline()))),
    );
    Figure {
        name: "validation: check+render 10",
        baseline: "jsonschema iter_errors lines",
        fusion_ns: f,
        baseline_ns: b,
        per_second: false,
        target: None,
    }
}

/// fusion's dispatch of one deposit and `baseline`'s, timed side by side; each call gets its
/// own copy of the arguments on both sides, made before the clock starts (the arguments object
/// is the input; copying it is not part of the work), in batches of 256, small enough that the
/// copies stay in cache, as a request's arguments just parsed are.
fn time_dispatch(baseline: impl Fn(Map<String, Value>) -> Result<String, String>) -> (f64, f64) {
    let tool = fixtures::Accounts;
    let arguments = fixtures::deposit_arguments();
    assert!(!fixtures::fusion_dispatch(&tool, arguments.clone()).is_error());
    assert!(baseline(arguments.clone()).is_ok());
    let copies =
        |n: u32| -> Vec<Map<String, Value>> { (0..n).map(|_| arguments.clone()).collect() };
    side_by_side_prepared(
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
                drop(black_box(baseline(black_box(input))));
            }
        },
    )
}

fn dispatch() -> Figure {
    let (f, b) = time_dispatch(fixtures::handwritten_dispatch);
    Figure {
        name: "dispatch: one action",
        baseline: "hand-written serde_json+match",
        fusion_ns: f,
        baseline_ns: b,
        per_second: false,
        target: Some(1.5),
    }
}

/// The same dispatch against a hand-written baseline that also checks the arguments against
/// the action's JSON Schema: what fusion costs a server that validates its inputs anyway.
fn dispatch_validating() -> Figure {
    let schema = fixtures::deposit_validator();
    let (f, b) = time_dispatch(|arguments| fixtures::validating_dispatch(&schema, arguments));
    Figure {
        name: "dispatch: vs schema-checking",
        baseline: "hand-written + jsonschema",
        fusion_ns: f,
        baseline_ns: b,
        per_second: false,
        target: None,
    }
}

/// The floor of any parser built on quick-xml's reader: every event of the envelope read,
/// nothing built.
fn quick_xml_events(xml: &str) -> usize {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut events = 0;
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) | Err(_) => return events,
            Ok(event) => {
                black_box(&event);
                events += 1;
            }
        }
    }
}

fn parse_envelope() -> Figure {
    let xml = fixtures::seed_error().to_xml();
    let parsed = fusion::client::parse_envelope(&xml).expect("the seed envelope parses");
    assert_eq!(parsed.to_xml(), xml);
    let (f, b) = side_by_side(
        10_000,
        |n| (0..n).for_each(|_| drop(black_box(fusion::client::parse_envelope(black_box(&xml))))),
        |n| (0..n).for_each(|_| _ = black_box(quick_xml_events(black_box(&xml)))),
    );
    Figure {
        name: "parse_envelope (seed)",
        baseline: "quick-xml events only",
        fusion_ns: f,
        baseline_ns: b,
        per_second: false,
        target: None,
    }
}

fn guards() -> Figure {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let arguments = serde_json::Value::Object(fixtures::deposit_arguments());
    let bare = Tester::new().tool(fixtures::Accounts);
    // A concurrency limit, an in-memory rate limit and a timeout, none of which refuses.
    let all = GuardSpec::new()
        .concurrency(ConcurrencyLimit::new(1024, 1024))
        .rate_limit(RateLimit::global(1_000_000_000, Duration::from_secs(1)))
        .timeout(Duration::from_secs(60));
    let guarded = Tester::new()
        .tool(fixtures::Accounts)
        .guard("accounts.deposit", all);
    let call = |tester: &Tester, n: u32| {
        runtime.block_on(async {
            for _ in 0..n {
                let outcome = tester.call("accounts", black_box(&arguments).clone()).await;
                assert!(outcome.response().tool_error().is_none());
            }
        })
    };
    let (f, b) = side_by_side(1_000, |n| call(&guarded, n), |n| call(&bare, n));
    Figure {
        name: "guards: all three",
        baseline: "same Tester call, no guards",
        fusion_ns: f,
        baseline_ns: b,
        per_second: false,
        target: None,
    }
}

fn end_to_end() -> Figure {
    // One thread for both sides: the shared 2-core machine then adds the least scheduling noise.
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
    let (f, b) = side_by_side(100, |n| calls(&fusion, n), |n| calls(&rmcp, n));
    runtime.block_on(async {
        let _ = fusion.cancel().await;
        let _ = rmcp.cancel().await;
    });
    Figure {
        name: "end to end: tools/call",
        baseline: "rmcp #[tool_router] tool",
        fusion_ns: f,
        baseline_ns: b,
        per_second: true,
        target: Some(0.9),
    }
}

fn main() {
    if cfg!(debug_assertions) {
        eprintln!("perf: built without optimizations; run with --release for real figures");
    }
    println!(
        "{:<28} {:>12} {:<8} | {:<30} {:>12} | ratio (fusion / baseline)",
        "figure", "fusion", "unit", "baseline", "baseline"
    );
    let only = std::env::args().nth(1).unwrap_or_default();
    let figures: [(&str, Measure); 8] = [
        ("envelope", envelope),
        ("validation: render", validation_render),
        ("validation: check", validation_check),
        ("dispatch", dispatch),
        ("dispatch: vs schema", dispatch_validating),
        ("parse_envelope", parse_envelope),
        ("guards", guards),
        ("end to end", end_to_end),
    ];
    for (name, figure) in figures {
        if name.contains(only.as_str()) {
            figure().print();
        }
    }
}
