#!/usr/bin/env bash
# Compile-time cost of fusion's macros against rmcp's own: generates the same server of
# TOOLS tools x ACTIONS actions twice (benches/compile_time_gen.py), builds both, and prints two
# figures, each as both times and their ratio (fusion / rmcp; target <= 1.0x for both):
#
# - crate rebuild: the generated crate rebuilt from scratch (CARGO_INCREMENTAL=0, its source
#   touched) with every dependency already compiled, the cost a user pays on a clean build of the
#   crate that holds the tools.
# - incremental rebuild: the dev-profile rebuild after editing one string literal in one action's
#   body (CARGO_INCREMENTAL=1; every dependency and a first build of the crate done), the cost a
#   user pays on each edit of a handler. Each run edits the literal anew, on both sides.
#
# Each build runs RUNS times (default 5), alternating the two crates, and the medians are
# compared, for wall-clock time and for CPU time (user + system of cargo and rustc, steadier
# than wall time on a loaded machine). `--cold` also times one full build of each crate with its
# dependencies from an empty target directory (fusion's runtime and the proc macros included;
# shared dependencies like serde are built in both).
#
# usage: benches/compile-time.sh [--cold] [--release] [TOOLS ACTIONS]   (default 50 x 5)
#        `--release` applies to the crate rebuild only; the incremental rebuild is always dev.
# env:   SCRATCH (default: target/compile-time; never committed), RUNS (default 5),
#        CARGO_TARGET_DIR (default: $SCRATCH/target; point it at an existing target directory
#        to reuse dependencies already built there), INCREMENTAL_TARGET_DIR (default:
#        $SCRATCH/target-incremental: CARGO_INCREMENTAL=1 changes the profile of the path
#        dependencies, fusion and its macros, so sharing one directory would rebuild them at
#        every switch)
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
runs=${RUNS:-5}
scratch=${SCRATCH:-$repo/target/compile-time}
incremental_target=${INCREMENTAL_TARGET_DIR:-$scratch/target-incremental}

rm -rf "$scratch/src"
mkdir -p "$scratch/src"
generate() { python3 benches/compile_time_gen.py "$scratch/src" "$repo/fusion" "$tools" "$actions" "$@"; }
generate
# The workspace's dependency versions, so both crates build what fusion is tested with.
cp Cargo.lock "$scratch/src/Cargo.lock"

export CARGO_INCREMENTAL=0
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$scratch/target}"
cd "$scratch/src"

build() { # build CRATE [CARGO ARGS]: "WALL CPU" seconds of building CRATE (CPU = user + system
  # time of cargo and the compilers it ran, which a loaded machine inflates far less than wall)
  local out crate=$1
  shift
  out=$(mktemp)
  /usr/bin/time -f '%e %U %S' -o "$out" cargo build -q "$@" -p "$crate"
  awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$out"
  rm -f "$out"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

report() { # report TITLE: prints the medians of fusion_{wall,cpu} and rmcp_{wall,cpu}
  local kind f_all r_all f r
  for kind in wall cpu; do
    f_all="fusion_$kind[*]" r_all="rmcp_$kind[*]"
    f=$(printf '%s\n' ${!f_all} | median)
    r=$(printf '%s\n' ${!r_all} | median)
    printf '%s, %s time, median of %s: fusion %.2f s (%s), rmcp %.2f s (%s), ratio %.2fx (target <= 1.0x)\n' \
      "$1" "$kind" "$runs" "$f" "${!f_all}" "$r" "${!r_all}" "$(echo "$f / $r" | bc -l)"
  done
}

if [ "$cold" = 1 ]; then
  rm -rf "$scratch/target-cold"
  for crate in gen-fusion gen-rmcp; do
    read -r w c < <(CARGO_TARGET_DIR="$scratch/target-cold/$crate" build "$crate" "${profile[@]}")
    printf 'cold build (all dependencies) %-10s %8.1f s wall, %8.1f s cpu\n' "$crate" "$w" "$c"
  done
fi

# Dependencies and a first build of each crate, untimed. One crate per cargo command, as the
# timed builds do: cargo unifies features over the packages of one command, so building both
# at once would compile dependencies the single-crate builds then compile again.
first_builds() { cargo build -q "$@" -p gen-fusion && cargo build -q "$@" -p gen-rmcp; }

# Crate rebuild.
first_builds "${profile[@]}"
fusion_wall=() fusion_cpu=() rmcp_wall=() rmcp_cpu=()
for _ in $(seq "$runs"); do
  touch gen-fusion/src/main.rs gen-rmcp/src/main.rs
  read -r w c < <(build gen-fusion "${profile[@]}"); fusion_wall+=("$w"); fusion_cpu+=("$c")
  read -r w c < <(build gen-rmcp "${profile[@]}"); rmcp_wall+=("$w"); rmcp_cpu+=("$c")
done
mode=${profile[0]:---dev}
report "crate rebuild ($tools tools x $actions actions, ${mode#--})"

# Incremental rebuild after an edit.
export CARGO_INCREMENTAL=1 CARGO_TARGET_DIR="$incremental_target"
first_builds
fusion_wall=() fusion_cpu=() rmcp_wall=() rmcp_cpu=()
for run in $(seq "$runs"); do
  # A literal never used before in this directory, so each rebuild has real work to do.
  (cd "$repo" && generate "$(date +%s%N)$run")
  read -r w c < <(build gen-fusion); fusion_wall+=("$w"); fusion_cpu+=("$c")
  read -r w c < <(build gen-rmcp); rmcp_wall+=("$w"); rmcp_cpu+=("$c")
done
report "incremental rebuild after editing one action's body ($tools tools x $actions actions, dev)"
