//! One side of `perf`'s dispatch figure, alone in its process: `fusion` (the `#[fusion::tool]`
//! call) or `hand` (the hand-written serde_json baseline), in batches of 256 calls whose
//! arguments are made before the clock starts, for 3 seconds; prints the median nanoseconds per
//! call. A fresh process per side keeps each side's heap free of the other's, which `perf`
//! (sides alternating in one process) and criterion (one after the other) cannot; BENCHMARKS.md,
//! "Dispatch: strings moved, and how far the harness moves the figure", compares the three.
//!
//! Run: `cargo build --release -p examples --example dispatch_one_side`, then alternate
//! `target/release/examples/dispatch_one_side fusion` and `... hand` a few times.

use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "benches/fixtures.rs"]
mod fixtures;

fn main() {
    let side = std::env::args().nth(1).unwrap_or_default();
    let fusion = match side.as_str() {
        "fusion" => true,
        "hand" => false,
        _ => {
            eprintln!("usage: dispatch_one_side fusion|hand");
            std::process::exit(2);
        }
    };
    let tool = fixtures::Accounts;
    let mut times = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        let batch: Vec<_> = (0..256).map(|_| fixtures::deposit_arguments()).collect();
        let start = Instant::now();
        if fusion {
            for arguments in batch {
                drop(black_box(fixtures::fusion_dispatch(
                    &tool,
                    black_box(arguments),
                )));
            }
        } else {
            for arguments in batch {
                drop(black_box(fixtures::handwritten_dispatch(black_box(
                    arguments,
                ))));
            }
        }
        times.push(start.elapsed().as_nanos() as f64 / 256.0);
    }
    // The first batch warms the validator up; the median ignores it.
    times.sort_by(f64::total_cmp);
    println!("dispatch ({side}): {:.1} ns/call", times[times.len() / 2]);
}
