//! One side of a figure of `BENCHMARKS.md`, run a given number of times, for counting its
//! instructions with `valgrind --tool=callgrind`: the count, unlike time, does not depend on
//! what else the machine runs, so it compares the two sides of a ratio exactly.
//! `scripts/instructions.sh` runs each side twice (1 000 and 2 000 operations) and divides the
//! difference by 1 000, which cancels start-up, warm-up and the validator's first build.
//!
//! Sides: `envelope` (`ToolError::to_xml` of the seed example) and `floor` (one allocation and
//! one copy of the same bytes); `dispatch` (the `#[fusion::tool]` call of figure 3), `hand`
//! (the hand-written `serde_json` + `match` baseline) and `arguments` (only making each call's
//! arguments, which both dispatch sides do before the calls and the script subtracts).
//!
//! Run: `cargo build --release -p examples --example instructions`, then
//! `target/release/examples/instructions dispatch 1000` (what the script does).

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
        "envelope" => (0..n).for_each(|_| drop(black_box(black_box(&err).to_xml()))),
        "floor" => (0..n).for_each(|_| drop(black_box(fixtures::floor(black_box(&xml))))),
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
        "arguments" => drop(black_box(arguments)),
        other => {
            eprintln!("unknown side {other:?}: envelope, floor, dispatch, hand or arguments");
            std::process::exit(2);
        }
    }
}
