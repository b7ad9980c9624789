#!/usr/bin/env bash
# Billing replicas behind a real load balancer, proven with a real MCP client.
#
# Starts on loopback, on free ports: redis-server, three `fusion-billing --http` replicas keeping
# their rate limits and tasks in it (`--redis`) and sharing one key for MRTR request states
# (`--request-state-key-file`), and HAProxy in front of them (the configuration of the
# deployment guide, fusion/src/docs/deployment.md). Then `replicas_driver` (examples/), rmcp's
# Streamable HTTP client with fusion's client on top, checks through the balancer (and, for
# tasks and mrtr, on the replicas' own ports) that:
#   limit      the shared rate limit holds exactly across replicas (5 charges, then RATE_LIMITED)
#   sessions   a client of the previous revision (initialize, Mcp-Session-Id) stays on its replica
#   tasks      an export task started on one replica is polled, fetched and cancelled on others
#   mrtr       a refund's confirmation asked on one replica is answered on another
#   failover   a replica killed mid-stream loses no call: every call is answered
#   busy       with Redis stopped, rate-limited calls fail closed with SERVER_BUSY
#   recovered  with Redis back, they succeed again
#
# Installs haproxy and redis-server with apt-get when missing. Uses the binaries at
# $FUSION_BILLING_BIN (built when missing) and $FUSION_REPLICAS_DRIVER (built when unset), with
# cargo --locked. Prints PASS/FAIL per check and exits 1 when any check fails; about 10 s once
# built.
set -euo pipefail
cd "$(dirname "$0")/.."

for pkg in haproxy redis-server; do
  command -v "$pkg" >/dev/null || { apt-get update && apt-get install -y "$pkg"; }
done
command -v python3 >/dev/null || { apt-get update && apt-get install -y python3; }

target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
bin=${FUSION_BILLING_BIN:-$target_dir/debug/fusion-billing}
driver=${FUSION_REPLICAS_DRIVER:-$target_dir/debug/examples/replicas_driver}
[ -x "$bin" ] || cargo build -p examples --bin fusion-billing --locked
# The driver is rebuilt unless given: an example, its build reuses the tests' dependencies.
[ -n "${FUSION_REPLICAS_DRIVER:-}" ] || cargo build -p examples --example replicas_driver --locked

work=$(mktemp -d)
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Free ports, chosen by the OS: Redis, the balancer, its stats page, three replicas.
read -r redis_port lb_port stats_port p1 p2 p3 < <(python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(6)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
)

# Waits until `cmd...` succeeds, at most 10 s.
wait_for() {
  local what=$1
  shift
  for _ in $(seq 100); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "replicas.sh: $what did not come up" >&2
  return 1
}

redis_pid=
start_redis() {
  # No persistence: a restarted Redis starts empty, as after losing its data.
  redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no \
    >>"$work/redis.log" 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
  wait_for "redis-server" redis-cli -p "$redis_port" ping
}
start_redis

# Every replica names the balancer's URL as its resource: the audience of the bearer tokens
# clients present, whichever replica they reach. The rate limits are per token subject, and so
# is a task. One request-state key for all: a confirmation's answer may reach any replica.
url="http://127.0.0.1:$lb_port/mcp"
head -c 32 /dev/urandom >"$work/request-state.key"
replica_pids=()
for port in "$p1" "$p2" "$p3"; do
  "$bin" --http "127.0.0.1:$port" --redis "redis://127.0.0.1:$redis_port/0" \
    --public-url "$url" --request-state-key-file "$work/request-state.key" \
    >>"$work/replica-$port.log" 2>&1 &
  replica_pids+=("$!")
  pids+=("$!")
done
for port in "$p1" "$p2" "$p3"; do
  wait_for "replica on port $port" grep -q listening "$work/replica-$port.log"
done

cat >"$work/haproxy.cfg" <<EOF
global
  maxconn 1000

defaults
  mode http
  timeout connect 1s
  timeout client 30s
  timeout server 30s
  # A request whose connection to a replica fails (the replica is down, not yet marked so)
  # goes to another one: it never reached a replica, so resending it is safe for every call.
  retries 3
  option redispatch 1
  retry-on conn-failure

frontend mcp
  bind 127.0.0.1:$lb_port
  default_backend billing

backend billing
  balance roundrobin
  # The client's address, for the replicas' logs and for rate limits keyed by address
  # (calls without a token, with the balancer in Guards::trusted_proxies). Appended to
  # X-Forwarded-For, the header the replicas read by default; never "if-none", which keeps
  # a header the client wrote.
  option forwardfor
  # Sessions (clients of revisions before 2026-07-28): a session lives on the replica that
  # answered its initialize, so requests carrying its Mcp-Session-Id go back there. Stateless
  # requests carry none and are balanced freely.
  stick-table type string len 128 size 100k expire 30m
  stick store-response res.hdr(mcp-session-id)
  stick match req.hdr(mcp-session-id)
  # A replica that stops accepting connections is out within half a second.
  default-server check inter 500ms fall 1 rise 2
  server r1 127.0.0.1:$p1
  server r2 127.0.0.1:$p2
  server r3 127.0.0.1:$p3

frontend stats
  bind 127.0.0.1:$stats_port
  stats enable
  stats uri /stats
EOF
haproxy -c -q -f "$work/haproxy.cfg"
haproxy -db -f "$work/haproxy.cfg" >>"$work/haproxy.log" 2>&1 &
pids+=("$!")
wait_for "haproxy" curl -sf "http://127.0.0.1:$stats_port/stats;csv"

echo "redis :$redis_port, haproxy :$lb_port (stats :$stats_port), replicas :$p1 :$p2 :$p3"

# One column of HAProxy's CSV statistics for each replica: "r1=... r2=... r3=...".
stats() {
  curl -sf "http://127.0.0.1:$stats_port/stats;csv" | python3 -c '
import csv, sys
rows = list(csv.DictReader(line.lstrip("# ") for line in sys.stdin))
col = sys.argv[1]
print(" ".join(r["svname"] + "=" + r[col] for r in rows
               if r["pxname"] == "billing" and r["svname"].startswith("r")))
' "$1"
}

results=()
failed=0
run() {
  local check=$1
  shift
  echo "--- $check"
  if "$driver" "$check" --url "$url" "$@" | tee "$work/$check.out"; then
    results+=("$(grep '^PASS' "$work/$check.out")")
  else
    results+=("$(grep '^FAIL' "$work/$check.out" || echo "FAIL $check: the driver failed")")
    failed=1
  fi
}
check() {
  local name=$1 ok=$2 detail=$3
  if [ "$ok" = 1 ]; then results+=("PASS $name: $detail"); else
    results+=("FAIL $name: $detail")
    failed=1
  fi
  echo "${results[-1]}"
}

start=$SECONDS
run limit --limit 5
served=$(stats hrsp_2xx)
spread=1
for r in $served; do [ "${r#*=}" -gt 0 ] || spread=0; done
check "limit-spread" "$spread" "every replica answered some of those calls (2xx: $served)"

run sessions

# The replicas' own endpoints: start on one, finish on another.
replica_urls="http://127.0.0.1:$p1/mcp,http://127.0.0.1:$p2/mcp,http://127.0.0.1:$p3/mcp"
run tasks --replicas "$replica_urls"
run mrtr --replicas "$replica_urls"

run failover --calls 600 --workers 4 --kill-pid "${replica_pids[1]}"
sleep 1
status=$(stats status)
case "$status" in *"r2=DOWN"*) down=1 ;; *) down=0 ;; esac
check "failover-down" "$down" "haproxy marked the killed replica down ($status)"

kill "$redis_pid"
wait "$redis_pid" 2>/dev/null || true
run busy
start_redis
run recovered

echo
echo "=== replicas.sh summary ($((SECONDS - start)) s)"
printf '%s\n' "${results[@]}"
if [ "$failed" != 0 ]; then
  echo "replicas.sh: FAIL; the server logs:"
  for log in "$work"/*.log; do
    echo "--- $log"
    tail -20 "$log"
  done
  exit 1
fi
echo "replicas.sh: PASS"
