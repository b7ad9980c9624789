//! Per-call overhead of the runtime guards: the same call of the same tool, through
//! `fusion::testing::Tester` (the server's guard path, no transport), without guards and with
//! each guard and all of them (a concurrency limit, an in-memory rate limit, a timeout), none of
//! which refuses.
//!
//! Run: `cargo bench -p fusion --bench guards`. Besides criterion's report, the run ends with
//! one line measured side by side (interleaved batches): both figures, the difference and the
//! ratio.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use fusion::guard::{ConcurrencyLimit, GuardSpec, RateLimit};
use fusion::testing::Tester;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::runtime::Runtime;

mod support;

/// Calls per timed batch of the side-by-side line.
const BATCH: u32 = 5_000;

/// Echoes.
pub struct Echo;

/// A number.
#[derive(Deserialize, JsonSchema)]
pub struct N {
    /// The number.
    pub n: u64,
}

/// Echoes numbers.
#[fusion::tool]
impl Echo {
    /// Echoes a number.
    #[action(read_only)]
    pub fn echo(&self, args: N) -> u64 {
        args.n
    }
}

fn tester(spec: Option<GuardSpec>) -> Tester {
    let tester = Tester::new().tool(Echo);
    match spec {
        Some(spec) => tester.guard("echo.echo", spec),
        None => tester,
    }
}

fn concurrency() -> GuardSpec {
    GuardSpec::new().concurrency(ConcurrencyLimit::new(1024, 1024))
}

fn rate() -> GuardSpec {
    // Never reached: a billion calls a second.
    GuardSpec::new().rate_limit(RateLimit::global(1_000_000_000, Duration::from_secs(1)))
}

fn timeout() -> GuardSpec {
    GuardSpec::new().timeout(Duration::from_secs(60))
}

fn all() -> GuardSpec {
    let mut spec = GuardSpec::new();
    spec.concurrency = concurrency().concurrency;
    spec.rate_limit = rate().rate_limit;
    spec.timeout = timeout().timeout;
    spec
}

fn call(rt: &Runtime, tester: &Tester, arguments: &Value) -> bool {
    let outcome = rt.block_on(tester.call("echo.echo", arguments.clone()));
    outcome.response().tool_error().is_none()
}

fn bench(c: &mut Criterion, rt: &Runtime) {
    let arguments = json!({"n": 7});
    let mut group = c.benchmark_group("guards");
    let cases = [
        ("no guards", None),
        ("concurrency limit", Some(concurrency())),
        ("rate limit (in memory)", Some(rate())),
        ("timeout", Some(timeout())),
        ("all three", Some(all())),
    ];
    for (name, spec) in cases {
        let tester = tester(spec);
        assert!(call(rt, &tester, &arguments), "{name}: the call succeeds");
        group.bench_function(name, |b| {
            b.iter(|| call(rt, black_box(&tester), &arguments))
        });
    }
    group.finish();
}

/// Interleaves batches of both so machine noise hits them alike; reports the medians.
fn side_by_side(rt: &Runtime) {
    let arguments = json!({"n": 7});
    let (bare, guarded) = (tester(None), tester(Some(all())));
    let (mut without, mut with) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        without.push(support::ns_per_call(BATCH, || call(rt, &bare, &arguments)));
        with.push(support::ns_per_call(BATCH, || {
            call(rt, &guarded, &arguments)
        }));
    }
    let (a, b) = (support::median(&mut without), support::median(&mut with));
    println!(
        "side by side: no guards {a:.0} ns/call, all three guards {b:.0} ns/call, \
         overhead {:.0} ns/call, ratio {:.2}x",
        b - a,
        b / a
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion, &rt);
    criterion.final_summary();
    side_by_side(&rt);
}
