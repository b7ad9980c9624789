#!/usr/bin/env bash
# Instructions per call of the two Rust peers, fusion and rmcp's `#[tool_router]` (the servers of
# peers/servers.rs, over Streamable HTTP on loopback), counted by valgrind's callgrind: the CPU
# figure that a machine shared with other work, or with the load generator, cannot move. Each
# server runs under callgrind; after a warm-up of WARMUP calls its counters are zeroed, `peers
# drive --calls CALLS` makes exactly that many calls (going round a lookup, a not-found error and
# invalid arguments, INFLIGHT sessions), and the counters are dumped. Instructions per call is
# the server's whole count (every thread: HTTP, sessions, the tool) over the calls, including
# opening and closing the sessions of the round, and the one session and two calls with which
# `drive` first checks that each server answers (0.1 % of 3,000 calls; keep CALLS in the
# thousands). CALLS must be at least 1. An instruction count is not time (cache misses
# and contention are not in it): read it next to `run.sh`'s CPU per call.
#
# usage: benches/peers/instructions.sh                 # 3,000 calls each, about 1 min
#        CALLS=10000 INFLIGHT=16 benches/peers/instructions.sh
# Needs valgrind (callgrind_control). Ports PORT and PORT+1 (default 38491) must be free.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
calls=${CALLS:-3000}
warmup=${WARMUP:-300}
inflight=${INFLIGHT:-8}
port=${PORT:-38491}
command -v valgrind > /dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }

source "$here/common.sh"
build_peers release
for name in fusion rmcp; do
  start "$name" valgrind --tool=callgrind --callgrind-out-file="$logs/$name.out" \
    "$peers_bin" serve "$name"
done

drive() { "$peers_bin" drive --rounds 1 --inflight "$inflight" --calls "$1" "${targets[@]}"; }
drive "$warmup" > /dev/null
for pid in "${pids[@]}"; do callgrind_control -z "$pid" > /dev/null 2>&1; done
drive "$calls" > /dev/null
for pid in "${pids[@]}"; do callgrind_control -d "$pid" > /dev/null 2>&1; done

echo "instructions per call over $calls calls ($inflight sessions), counted by callgrind;" \
  "fusion $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $(rustc --version)"
python3 - "$logs" "$calls" << 'PY'
import pathlib, sys
out, calls = pathlib.Path(sys.argv[1]), int(sys.argv[2])
def total(name):
    dump = out / f"{name}.out.1"
    for line in dump.read_text().splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    raise SystemExit(f"no totals in {dump}")
per_call = {name: total(name) / calls for name in ("fusion", "rmcp")}
for name, value in per_call.items():
    print(f"{name:<8}{value:>12,.0f} instructions/call {value / per_call['rmcp']:>6.2f}x")
PY
