# Sourced by run.sh and instructions.sh: builds `peers`, and starts servers in the background,
# stopped when the script exits. Expects `root` (the repository) and `port` (the first port).
# Sets `logs` (a scratch folder, removed on exit), `pids` and `targets` (NAME=HOST:PORT=PID, as
# `peers drive` takes them).

# build_peers PROFILE: builds `peers` with that cargo profile; sets `peers_bin`.
build_peers() {
  cargo build --profile "$1" --locked -q -p fusion-benches --bin peers
  local target_dir
  target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps --locked |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  peers_bin="$target_dir/$1/peers"
}

logs=$(mktemp -d)
pids=()
targets=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$logs"
}
trap cleanup EXIT

# start NAME COMMAND...: runs COMMAND PORT on the next port, in the background, its output in
# $logs/NAME.log.
start() {
  local name=$1
  shift
  "$@" "$port" > "$logs/$name.log" 2>&1 &
  pids+=("$!")
  targets+=("$name=127.0.0.1:$port=$!")
  port=$((port + 1))
}
