#!/usr/bin/env bash
# A real OpenID provider (oidc-provider, pinned in package.json) for fusion's bearer auth.
# Installs it into clients/oidc/node_modules, then either
#   clients/oidc/run.sh          runs fusion's tests against it (fusion/tests/auth_oidc.rs, which
#                                starts the provider itself, and auth_introspection.rs) and the
#                                billing example with --issuer (billing_smoke.py), or
#   clients/oidc/run.sh serve [PORT]
#                                serves it on http://127.0.0.1:PORT (default 9090) until Ctrl-C;
#                                see provider.mjs for its clients and resources.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
command -v npm >/dev/null || { echo "clients/oidc/run.sh: npm is needed" >&2; exit 1; }
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
echo "node $(node --version), oidc-provider $(cd "$here" && node -p 'require("oidc-provider/package.json").version')"

if [[ "${1:-}" == "serve" ]]; then
  state="$(mktemp -d)"
  trap 'rm -rf "$state"' EXIT
  cd "$here" && exec node provider.mjs "${2:-9090}" "$state"
fi

cd "$root"
# The features of the CI's auth step, so its build is reused.
FUSION_REQUIRE_OIDC=1 cargo test -p fusion --features auth,opentelemetry --locked \
  --test auth_oidc --test auth_introspection
# The billing example as the auth guide runs it: tokens of the provider, a JWT and an opaque one.
cargo build -p examples --bin fusion-billing --locked
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
python3 "$here/billing_smoke.py" "$target/debug/fusion-billing"
