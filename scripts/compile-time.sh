#!/usr/bin/env bash
# Compile-time cost of fusion's macros against rmcp's own: generates the same server of
# 50 tools x 5 actions twice (scripts/compile_time_gen.py), builds both, prints both times and
# their ratio (fusion / rmcp; target <= 1.5).
#
# "Clean" here means: the generated crate itself is rebuilt from scratch (CARGO_INCREMENTAL=0,
# its source touched) with every dependency already compiled, which is the cost a user pays
# on each change to the crate that holds the tools. Each build runs RUNS times (default 3),
# alternating the two crates, and the medians are compared, for wall-clock time and for CPU
# time (user + system of cargo and rustc, steadier than wall time on a loaded machine). `--cold` also times one full build
# of each crate with its dependencies from an empty target directory (fusion's runtime and the
# proc macros included; shared dependencies like serde are built in both).
#
# usage: scripts/compile-time.sh [--cold] [--release] [TOOLS ACTIONS]
# env:   SCRATCH (default: target/compile-time; never committed), RUNS (default 3),
#        CARGO_TARGET_DIR (default: $SCRATCH/target; point it at an existing target directory
#        to reuse dependencies already built there)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

cold=0
profile=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cold) cold=1; shift ;;
    --release) profile=(--release); shift ;;
    *) break ;;
  esac
done
tools=${1:-50}
actions=${2:-5}
runs=${RUNS:-3}
scratch=${SCRATCH:-$repo/target/compile-time}

rm -rf "$scratch/src"
mkdir -p "$scratch/src"
python3 scripts/compile_time_gen.py "$scratch/src" "$repo/fusion" "$tools" "$actions"
# The workspace's dependency versions, so both crates build what fusion is tested with.
cp Cargo.lock "$scratch/src/Cargo.lock"

export CARGO_INCREMENTAL=0
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$scratch/target}"
cd "$scratch/src"

build() { # build CRATE: "WALL CPU" seconds of building CRATE (CPU = user + system time of
  # cargo and the compilers it ran, which a loaded machine inflates far less than wall time)
  local out
  out=$(mktemp)
  /usr/bin/time -f '%e %U %S' -o "$out" cargo build -q "${profile[@]}" -p "$1"
  awk '{ printf "%.1f %.1f\n", $1, $2 + $3 }' "$out"
  rm -f "$out"
}

if [ "$cold" = 1 ]; then
  rm -rf "$scratch/target-cold"
  for crate in gen-fusion gen-rmcp; do
    read -r w c < <(CARGO_TARGET_DIR="$scratch/target-cold/$crate" build "$crate")
    printf 'cold build (all dependencies) %-10s %8.1f s wall, %8.1f s cpu\n' "$crate" "$w" "$c"
  done
fi

# Dependencies first, untimed.
cargo build -q "${profile[@]}" -p gen-fusion -p gen-rmcp

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
fusion_wall=() fusion_cpu=() rmcp_wall=() rmcp_cpu=()
for _ in $(seq "$runs"); do
  touch gen-fusion/src/main.rs gen-rmcp/src/main.rs
  read -r w c < <(build gen-fusion); fusion_wall+=("$w"); fusion_cpu+=("$c")
  read -r w c < <(build gen-rmcp); rmcp_wall+=("$w"); rmcp_cpu+=("$c")
done
mode=${profile[0]:---dev}
for kind in wall cpu; do
  f_all="fusion_$kind[*]" r_all="rmcp_$kind[*]"
  f=$(printf '%s\n' ${!f_all} | median)
  r=$(printf '%s\n' ${!r_all} | median)
  printf 'crate rebuild (%s tools x %s actions, %s, %s time, median of %s): fusion %.1f s (%s), rmcp %.1f s (%s), ratio %.2fx (target <= 1.5x)\n' \
    "$tools" "$actions" "${mode#--}" "$kind" "$runs" "$f" "${!f_all}" "$r" "${!r_all}" "$(echo "$f / $r" | bc -l)"
done
