#!/usr/bin/env bash
# Instructions per operation of the figures with a target in BENCHMARKS.md, counted with
# valgrind's callgrind: envelope rendering against its floor, and dispatch against the
# hand-written baseline. Counts do not depend on the machine's load, so this ratio is the
# same on a busy shared machine as on a quiet one (time, on which the targets are set, also
# depends on how fast each instruction runs: see BENCHMARKS.md).
#
# Each side runs twice under callgrind, 1 000 and 2 000 operations, and the difference is
# divided by 1 000 (start-up, warm-up and one-time building cancel out). Every run first makes
# one dispatch call's arguments per operation (so that all runs do the same work besides their
# side); that is counted alone and subtracted.
#
# usage: scripts/instructions.sh        needs valgrind (apt-get install valgrind)
# env:   CARGO_TARGET_DIR as for cargo
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }
cargo build --release --locked -q -p examples --example instructions
bin="${CARGO_TARGET_DIR:-target}/release/examples/instructions"

# Total instructions of one run: callgrind's "refs" line.
refs() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 \
    | sed -n 's/.*refs: *//p' | tr -d ','
}

# Instructions per operation of one side.
per_op() {
  local a b
  a=$(refs "$1" 1000)
  b=$(refs "$1" 2000)
  echo $(((b - a) / 1000))
}

arguments=$(per_op arguments)
envelope=$(($(per_op envelope) - arguments))
floor=$(($(per_op floor) - arguments))
dispatch=$(($(per_op dispatch) - arguments))
hand=$(($(per_op hand) - arguments))

line() {
  awk -v name="$1" -v f="$2" -v base="$3" -v b="$4" -v target="$5" 'BEGIN {
    printf "%-28s %6d instr/op | %-34s %6d | ratio %5.2fx | time target %s\n",
      name, f, base, b, f / b, target }'
}
echo "figure                         fusion          | baseline                            baseline"
line "envelope: to_xml (seed)" "$envelope" "floor: copy the same bytes" "$floor" "<= 3x"
line "dispatch: one action" "$dispatch" "hand-written serde_json+match" "$hand" "<= 1.5x"
