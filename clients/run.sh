#!/usr/bin/env bash
# Real-client interoperability tests against the fusion-billing example server, and against
# fusion-composed (a fusion tool, an rmcp prompt and resources in one server):
#   1. Python: the official `mcp` SDK over stdio, and over Streamable HTTP for the session's
#      lifecycle (pytest), in clients/python/.venv; as a 2026-07-28 client, MRTR confirmations
#      and tasks (the tasks extension on the SDK's client extension API)
#   2. TypeScript: the official SDK over Streamable HTTP (node --test): `@modelcontextprotocol/sdk`
#      1.x, and `@modelcontextprotocol/client` 2.x as a 2026-07-28 client (MRTR confirmations)
#   3. The MCP Inspector CLI over stdio (clients/inspector.sh), when present
#
# Expects the binaries at $FUSION_BILLING_BIN and $FUSION_COMPOSED_BIN (default
# target/debug/fusion-billing and target/debug/fusion-composed from the repo root) and does NOT
# build them:
#   cargo build -p examples --bin fusion-billing --bin fusion-composed && clients/run.sh
# Exits non-zero if any step fails (every step runs regardless); the last line sums the counts.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="${FUSION_BILLING_BIN:-$root/target/debug/fusion-billing}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
export FUSION_BILLING_BIN="$bin"
composed="${FUSION_COMPOSED_BIN:-$root/target/debug/fusion-composed}"
case "$composed" in /*) ;; *) composed="$root/$composed" ;; esac
export FUSION_COMPOSED_BIN="$composed"
python="${PYTHON:-python3}"

for binary in "$bin" "$composed"; do
  if [[ ! -x "$binary" ]]; then
    echo "clients/run.sh: binary not found at $binary" >&2
    echo "build it first: cargo build -p examples --bin fusion-billing --bin fusion-composed" >&2
    exit 1
  fi
done

run() {
  echo "+ $*"
  "$@"
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
status=0
start=$SECONDS

step_failed() {
  echo "FAILED: $1" >&2
  status=1
}

# --- 1. Python SDK over stdio (and one session over Streamable HTTP)
echo "=== Python (mcp SDK, stdio and Streamable HTTP) ==="
venv="$here/python/.venv"
py_ok=1
if [[ ! -x "$venv/bin/python" ]]; then
  run "$python" -m venv "$venv" || py_ok=0
fi
if [[ $py_ok -eq 1 ]]; then
  run "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$here/python/requirements.txt" || py_ok=0
fi
if [[ $py_ok -eq 1 ]]; then
  (cd "$here/python" && run "$venv/bin/python" -m pytest -p no:cacheprovider --junitxml="$tmp/python.xml" test_billing.py test_billing_http.py test_billing_elicitation.py test_billing_mrtr.py test_billing_tasks.py test_billing_stringified.py test_composed.py) || py_ok=0
  if [[ -f "$tmp/python.xml" ]]; then
    read -r p f < <("$venv/bin/python" - "$tmp/python.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root)
tests = sum(int(s.get("tests", 0)) for s in suites)
bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
skipped = sum(int(s.get("skipped", 0)) for s in suites)
print(tests - bad - skipped, bad)
EOF
    ) && { passed=$((passed + p)); failed=$((failed + f)); }
  fi
fi
[[ $py_ok -eq 1 ]] || step_failed "python"

# --- 2. TypeScript SDK over Streamable HTTP
echo "=== TypeScript (@modelcontextprotocol/sdk, Streamable HTTP) ==="
ts_ok=1
(cd "$here/typescript" && run npm ci --no-audit --no-fund) || ts_ok=0
if [[ $ts_ok -eq 1 ]]; then
  (cd "$here/typescript" && run node --test --test-reporter=tap billing.test.mjs composed.test.mjs mrtr.test.mjs) | tee "$tmp/ts.tap"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || ts_ok=0
  p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$tmp/ts.tap" | tail -1)
  f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$tmp/ts.tap" | tail -1)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
fi
[[ $ts_ok -eq 1 ]] || step_failed "typescript"

# --- 3. MCP Inspector CLI over stdio
if [[ -x "$here/inspector.sh" ]]; then
  echo "=== MCP Inspector CLI (stdio) ==="
  insp_ok=1
  (cd "$here/inspector" && run npm ci --no-audit --no-fund) || insp_ok=0
  if [[ $insp_ok -eq 1 ]]; then
    run "$here/inspector.sh" | tee "$tmp/inspector.out"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || insp_ok=0
    line=$(grep -E '^inspector: [0-9]+ passed, [0-9]+ failed$' "$tmp/inspector.out" | tail -1)
    if [[ $line =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
      passed=$((passed + BASH_REMATCH[1]))
      failed=$((failed + BASH_REMATCH[2]))
    fi
  fi
  [[ $insp_ok -eq 1 ]] || step_failed "inspector"
fi

echo "clients/run.sh finished in $((SECONDS - start)) s"
if [[ $status -ne 0 && $failed -eq 0 ]]; then
  failed=1 # a step failed before it could count its tests
fi
echo "clients: $passed passed, $failed failed"
exit $status
