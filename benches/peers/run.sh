#!/usr/bin/env bash
# fusion next to the MCP servers a user would otherwise write: the same small tool, `get_invoice`
# (`{"id": "inv_1"}` finds an invoice, any other id is not found, `{"id": 42}` is invalid
# arguments), served over Streamable HTTP on loopback by
#   fusion      `Server::serve_http_on`, its defaults                     (peers/servers.rs)
#   rmcp        `#[tool_router]` in rmcp's `StreamableHttpService`, axum, TCP_NODELAY (same file)
#   typescript  the official SDK, `@modelcontextprotocol/sdk`, on Node    (peers/typescript/)
#   fastmcp     FastMCP on Python, uvicorn                                (peers/python/)
# and driven by one load generator (`peers drive`, peers/main.rs): 64 keep-alive connections,
# a session each (`initialize`, then `tools/call` back to back, going round the three calls),
# every server in turn for SECS seconds, ROUNDS rounds (A B C D, A B C D, ...), so that whatever
# else the machine does spreads over all four. Per server, the medians over the rounds: calls per
# second, p50/p99 latency, the server's CPU time per call (user + system of its process over the
# measured window, /proc/<pid>/stat) and its resident memory after the load with the sessions
# still open (VmRSS, and its anonymous part, RssAnon: the process's own heap and stacks, without
# the binary's mapped code) and a second after they closed, then the ratios to rmcp, then what
# each server answers to the invalid-arguments and not-found calls.
#
# The load generator shares the machine with the server it drives (2 cores here): calls per
# second and latency are those of the pair; CPU per call is the server's own and is the figure
# the load generator disturbs least.
#
# usage: benches/peers/run.sh                      # 3 rounds x 5 s per server, about 2 min
#        SECS=10 ROUNDS=5 INFLIGHT=64 benches/peers/run.sh
#        PEERS="fusion rmcp" benches/peers/run.sh  # a subset (names above)
#        PROFILE=release-lto benches/peers/run.sh   # the Rust peers with LTO (Cargo.toml)
#        ONLY=invalid benches/peers/run.sh          # one kind of call: found|not-found|invalid
# Installs what it needs on first use: the TypeScript SDK with npm into peers/typescript/
# (package-lock.json), FastMCP with pip into a venv at peers/python/.venv (requirements.txt);
# builds `peers` in release. Ports PORT..PORT+3 (default 38471) on 127.0.0.1 must be free.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
secs=${SECS:-5}
rounds=${ROUNDS:-3}
inflight=${INFLIGHT:-64}
peers=${PEERS:-fusion rmcp typescript fastmcp}
profile=${PROFILE:-release}
only=()
if [ -n "${ONLY:-}" ]; then only=(--only "$ONLY"); fi
port=${PORT:-38471}

wanted() { [[ " $peers " == *" $1 "* ]]; }

if wanted typescript && [ ! -d "$here/typescript/node_modules" ]; then
  (cd "$here/typescript" && npm ci --no-audit --no-fund)
fi
if wanted fastmcp && [ ! -x "$here/python/.venv/bin/python" ]; then
  python3 -m venv "$here/python/.venv"
  "$here/python/.venv/bin/pip" install -q -r "$here/python/requirements.txt"
fi
source "$here/common.sh"
build_peers "$profile"
for peer in $peers; do
  case "$peer" in
    fusion) start fusion "$peers_bin" serve fusion ;;
    rmcp) start rmcp "$peers_bin" serve rmcp ;;
    typescript) start typescript node "$here/typescript/server.mjs" ;;
    fastmcp) start fastmcp "$here/python/.venv/bin/python" "$here/python/server.py" ;;
    *) echo "unknown peer $peer (fusion, rmcp, typescript, fastmcp)" >&2; exit 2 ;;
  esac
done

echo "peers on $(nproc) cores, the load generator on the same machine; $(date -u +%FT%TZ)"
echo "fusion $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?') ($profile profile), $(rustc --version)," \
  "node $(node --version 2>/dev/null || echo '-'), $("$here/python/.venv/bin/python" --version 2>/dev/null || echo 'no python venv')"
if ! "$peers_bin" drive --secs "$secs" --rounds "$rounds" --inflight "$inflight" "${only[@]}" \
  "${targets[@]}"; then
  for log in "$logs"/*.log; do echo "--- $log"; tail -20 "$log"; done >&2
  exit 1
fi
