//! One side of a figure of `BENCHMARKS.md`, run a given number of times, for counting its
//! instructions with `valgrind --tool=callgrind`: the count, unlike time, does not depend on
//! what else the machine runs. `scripts/instructions.sh` runs each side twice (10 000 and
//! 20 000 operations) and divides the difference by 10 000, which cancels start-up and the
//! validator's first build.
//!
//! Sides: `envelope` (`ToolError::to_xml` of the seed example) and `floor` (one allocation and
//! one copy of the same bytes); `dispatch` (the `#[fusion::tool]` call of figure 3) and `hand`
//! (the hand-written `serde_json` + `match` baseline); `arguments` (only making the dispatch
//! calls' arguments). Every side first makes one call's arguments per operation, as `perf`
//! does before the clock starts, so that all runs share that work and the script can subtract
//! it. The dispatch sides consume them (each call drops its arguments, inside the call, as in
//! `perf`); the other sides leak them (`mem::forget`), so that what is subtracted is making
//! them, never dropping them.
//!
//! Run: `cargo build --release -p examples --example instructions`, then
//! `target/release/examples/instructions dispatch 10000` (what the script does).

use std::hint::black_box;

#[path = "benches/fixtures.rs"]
mod fixtures;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(side), Some(Ok(n))) = (args.next(), args.next().map(|n| n.parse::<usize>())) else {
        eprintln!("usage: instructions envelope|floor|dispatch|hand|arguments COUNT");
        std::process::exit(2);
    };
    let err = fixtures::seed_error();
    let xml = err.to_xml();
    let tool = fixtures::Accounts;
    // Made for every side, so each run does the same work besides the side itself.
    let arguments: Vec<_> = (0..n).map(|_| fixtures::deposit_arguments()).collect();
    match side.as_str() {
        "envelope" => {
            (0..n).for_each(|_| drop(black_box(black_box(&err).to_xml())));
            std::mem::forget(arguments);
        }
        "floor" => {
            (0..n).for_each(|_| drop(black_box(fixtures::floor(black_box(&xml)))));
            std::mem::forget(arguments);
        }
        "dispatch" => {
            for arguments in arguments {
                drop(black_box(fixtures::fusion_dispatch(
                    &tool,
                    black_box(arguments),
                )));
            }
        }
        "hand" => {
            for arguments in arguments {
                drop(black_box(fixtures::handwritten_dispatch(black_box(
                    arguments,
                ))));
            }
        }
        "arguments" => std::mem::forget(black_box(arguments)),
        other => {
            eprintln!("unknown side {other:?}: envelope, floor, dispatch, hand or arguments");
            std::process::exit(2);
        }
    }
}
