#!/usr/bin/env bash
# Instructions per operation of the figures with a time target in BENCHMARKS.md, counted with
# valgrind's callgrind: envelope rendering against its floor, and dispatch against the
# hand-written baseline. A count does not depend on the machine's load, so this ratio can be
# compared between runs on a busy shared machine, where time cannot; it is not the time ratio
# the targets are set on (see BENCHMARKS.md, "A second machine, and instruction counts").
#
# Each side runs twice under callgrind, 10 000 and 20 000 operations, and the difference is
# divided by 10 000 (start-up and one-time building cancel out; what is left of one-time work
# seeded by random hashing moves the result by about one instruction). Every run first makes
# one dispatch call's arguments per operation, as `perf` does before its clock starts; making
# them is counted alone and subtracted (dropping them is not: each dispatch call drops its own
# arguments, as in `perf`). See examples/instructions.rs.
#
# usage: scripts/instructions.sh        needs valgrind (apt-get install valgrind)
# env:   CARGO_TARGET_DIR as for cargo
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }
cargo build --release --locked -q -p examples --example instructions
bin="${CARGO_TARGET_DIR:-target}/release/examples/instructions"

# Total instructions of one run of side $1 with $2 operations: callgrind's "refs" line.
refs() {
  local out count
  out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1) || {
    echo "$out" >&2
    echo "callgrind failed on: $bin $1 $2" >&2
    exit 1
  }
  count=$(sed -n 's/.*refs: *//p' <<<"$out" | tr -d ',')
  [[ $count =~ ^[0-9]+$ ]] || {
    echo "$out" >&2
    echo "no instruction count in callgrind's output for: $bin $1 $2" >&2
    exit 1
  }
  echo "$count"
}

# Instructions per operation of side $1.
per_op() {
  local a b
  a=$(refs "$1" 10000)
  b=$(refs "$1" 20000)
  echo $(((b - a) / 10000))
}

arguments=$(per_op arguments)
envelope=$(($(per_op envelope) - arguments))
floor=$(($(per_op floor) - arguments))
dispatch=$(($(per_op dispatch) - arguments))
hand=$(($(per_op hand) - arguments))

printf '%-26s %-12s | %-31s %-12s | %-7s | %s\n' \
  figure fusion baseline "" ratio "time target"
line() {
  printf '%-26s %6d instr | %-31s %6d instr | %6.2fx | %s\n' \
    "$1" "$2" "$3" "$4" "$(awk -v f="$2" -v b="$4" 'BEGIN { print f / b }')" "$5"
}
line "envelope: to_xml (seed)" "$envelope" "floor: copy the same bytes" "$floor" "<= 3x"
line "dispatch: one action" "$dispatch" "hand-written serde_json+match" "$hand" "<= 1.5x"
