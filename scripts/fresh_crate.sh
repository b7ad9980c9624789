#!/usr/bin/env bash
# A new user's crate, outside the workspace, built against fusion as it is packaged: the
# `[dependencies]` block of README.md (fusion's line pointed at the unpacked `.crate` files that
# `cargo package -p fusion-macros -p fusion` wrote to target/package) and the complete server of
# fusion/README.md as its main.rs. Fails if the block or the example no longer build together.
#
# Run after `cargo package -p fusion-macros -p fusion --locked` (as .ci/run does):
#   scripts/fresh_crate.sh
# Shares the workspace's target directory and build profiles, so dependencies already built are
# reused, and the workspace's Cargo.lock, so the versions are the ones the tests ran with.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

version=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "fusion"))')
target_dir=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
packages="$target_dir/package"
for crate in fusion fusion-macros; do
  [[ -f "$packages/$crate-$version.crate" ]] || {
    echo "fresh_crate.sh: $packages/$crate-$version.crate is missing; run cargo package -p fusion-macros -p fusion first" >&2
    exit 1
  }
done

# Inside the target directory, so that the repository's .cargo/config.toml (its build profiles)
# applies and the dependencies already built are reused; `[workspace]` in the manifest keeps the
# crate out of the repository's workspace.
work="$(mktemp -d "$target_dir/fresh-crate.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tar -xzf "$packages/fusion-$version.crate" -C "$work"
tar -xzf "$packages/fusion-macros-$version.crate" -C "$work"
mkdir -p "$work/app/src"

# The README's block, its fusion line replaced by the unpacked package; fusion-macros, which the
# package names by version, comes from the unpacked package too (a git dependency on the
# repository resolves it the same way, from the repository's workspace).
python3 - "$root/README.md" "$root/fusion/README.md" "$work" <<'PY'
import glob, re, sys
readme, crate_readme, work = sys.argv[1:]
text = open(readme).read()
block = re.search(r"```toml\n(\[dependencies\]\n.*?)```", text, re.S).group(1)
lines = block.splitlines()
fusion = [l for l in lines if re.match(r"fusion\s*=", l)]
assert len(fusion) == 1, f"one active fusion line in the README's block, found {fusion}"
features = re.search(r"features\s*=\s*(\[[^\]]*\])", fusion[0]).group(1)
fusion_dir = glob.glob(f"{work}/fusion-[0-9]*")[0]
macros_dir = glob.glob(f"{work}/fusion-macros-[0-9]*")[0]
block = block.replace(fusion[0], f'fusion = {{ path = "{fusion_dir}", features = {features} }}')
manifest = f"""[package]
name = "fresh-app"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

{block}
[patch.crates-io]
fusion-macros = {{ path = "{macros_dir}" }}
"""
open(f"{work}/app/Cargo.toml", "w").write(manifest)
example = re.search(r"```rust,no_run\n(.*?)```", open(crate_readme).read(), re.S).group(1)
open(f"{work}/app/src/main.rs", "w").write(example)
print(manifest)
PY
cp "$root/Cargo.lock" "$work/app/Cargo.lock"
(cd "$work/app" && CARGO_TARGET_DIR="$target_dir" cargo build --quiet)
echo "fresh_crate.sh: the README's [dependencies] block and fusion/README.md's server build from the packaged crates"
