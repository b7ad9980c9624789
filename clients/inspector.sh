#!/usr/bin/env bash
# The MCP Inspector CLI (@modelcontextprotocol/inspector-cli, pinned in clients/inspector/)
# against fusion-billing over stdio: lists tools and calls the billing tool, asserting on the
# JSON the inspector prints.
#
# Binary: $FUSION_BILLING_BIN, default target/debug/fusion-billing from the repo root. Not built here.
#
# Why inspector-cli 1.0.3 and not `@modelcontextprotocol/inspector --cli`: every release of the
# `inspector` package (0.17+, 1.x, 2.x) declares engines node >=22.7.5 (2.x: >=22.19), and this
# machine has Node 20; the standalone CLI package declares no engine and runs on Node 20.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="${FUSION_BILLING_BIN:-$root/target/debug/fusion-billing}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
if [[ ! -x "$bin" ]]; then
  echo "inspector.sh: fusion-billing binary not found at $bin (cargo build -p examples --bin fusion-billing)" >&2
  exit 1
fi

pkg="$here/inspector"
cli_dir="$pkg/node_modules/@modelcontextprotocol/inspector-cli/build"
if [[ ! -f "$cli_dir/cli.js" ]]; then
  echo "+ (cd $pkg && npm ci --no-audit --no-fund)"
  (cd "$pkg" && npm ci --no-audit --no-fund)
fi

passed=0
failed=0
out="$(mktemp)"
err="$(mktemp)"
trap 'rm -f "$out" "$err"' EXIT

# inspector-cli 1.0.3 checks fs.existsSync("../package.json") relative to the *working directory*
# but imports it relative to its own module; run it from its build/ folder so both agree
# (from anywhere else it fails with "Cannot find module .../@modelcontextprotocol/package.json").
inspect() {
  echo "+ mcp-inspector-cli --cli $bin $*"
  (cd "$cli_dir" && node cli.js --cli "$bin" "$@") >"$out" 2>"$err"
}

check() { # check NAME COMMAND...
  local name="$1"
  shift
  if "$@"; then
    echo "ok - $name"
    passed=$((passed + 1))
  else
    echo "not ok - $name"
    failed=$((failed + 1))
    echo "--- stdout:" && cat "$out"
    echo "--- stderr:" && cat "$err"
  fi
}

has() { grep -qF -- "$1" "$out"; }
has_err() { grep -qF -- "$1" "$err"; }
lacks() { ! grep -qF -- "$1" "$out"; }

# --- tools/list
inspect --method tools/list && rc=0 || rc=$?
check "tools/list exits 0" test "$rc" -eq 0
check "tools/list names the billing tool" has '"name": "billing"'
check "tools/list: action enum" has '"list_invoices",'
check "tools/list: required is [action]" grep -qzF -- $'"required": [\n        "action"\n      ]' "$out"
check "tools/list: no oneOf anywhere" lacks '"oneOf"'
check "tools/list: no allOf anywhere" lacks '"allOf"'
check "tools/list: annotations" has '"destructiveHint": true'
check 'tools/list: _meta["fusion/errors"]' has '"fusion/errors": ['

# --- a good call
inspect --method tools/call --tool-name billing --tool-arg action=get_invoice id=inv_0001 && rc=0 || rc=$?
check "get_invoice inv_0001 exits 0" test "$rc" -eq 0
check "get_invoice inv_0001 returns the invoice" \
  has '"text": "{\"id\":\"inv_0001\",\"amount_cents\":12000,\"currency\":\"EUR\",\"status\":\"open\"}"'
check "get_invoice inv_0001 is not an error" has '"isError": false'

# --- not found: the envelope byte-exact (as a JSON string) and the flags
inspect --method tools/call --tool-name billing --tool-arg action=get_invoice id=inv_2026 && rc=0 || rc=$?
check "get_invoice inv_2026 exits 0 (a tool error is a result)" test "$rc" -eq 0
check "not found: envelope byte-exact" \
  has '"text": "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>No invoice with that ID</message>\n<recovery>List invoices first, then retry with a real ID</recovery>\n<available_actions>\n  <action>billing.list_invoices</action>\n</available_actions>\n<details>\n  <detail key=\"requestedId\">inv_2026</detail>\n</details>\n</tool_error>"'
check "not found: isError true" has '"isError": true'
check 'not found: _meta["fusion/error"].code' has '"code": "NOT_FOUND"'
check 'not found: _meta["fusion/error"].errorCategory' has '"errorCategory": "not_found"'
check 'not found: _meta["fusion/error"].isRetryable' has '"isRetryable": false'

# --- validation error (amount_cents=0 is parsed as a JSON number by the inspector)
inspect --method tools/call --tool-name billing --tool-arg action=charge invoice_id=nope amount_cents=0 currency=GBP && rc=0 || rc=$?
check "invalid charge exits 0" test "$rc" -eq 0
check "validation: envelope opens" has '"text": "<validation_error action=\"billing.charge\">\n<field name=\"amount_cents\">'
check "validation: three fields, sorted" \
  grep -qE '<field name=\\"amount_cents\\">[^\\]*\\n<field name=\\"currency\\">[^\\]*\\n<field name=\\"invoice_id\\">' "$out"
check "validation: closing recovery" \
  has '<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>"'
check "validation: flags code" has '"code": "VALIDATION_ERROR"'
check "validation: flags category" has '"errorCategory": "validation"'

# --- a warning next to a result
inspect --method tools/call --tool-name billing --tool-arg action=charge invoice_id=inv_0002 amount_cents=5000 currency=USD && rc=0 || rc=$?
check "charge inv_0002 exits 0" test "$rc" -eq 0
check "warning: result block" has '"text": "{\"id\":\"inv_0002\",'
check "warning: envelope block" has '"text": "<tool_error code=\"ALREADY_PAID\" severity=\"warning\">\n'
check "warning: isError false" has '"isError": false'
check "warning: flags severity" has '"severity": "warning"'

# --- unknown tool: a JSON-RPC -32602 error, the inspector exits non-zero
inspect --method tools/call --tool-name no_such_tool --tool-arg action=list_invoices && rc=0 || rc=$?
check "unknown tool exits non-zero" test "$rc" -ne 0
check "unknown tool: MCP error -32602" has_err 'MCP error -32602'

echo "inspector: $passed passed, $failed failed"
[[ "$failed" -eq 0 ]]
