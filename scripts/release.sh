#!/usr/bin/env bash
# `make release`: every artifact this machine can build, into dist/.
#
#   dist/npm/     @orpc-agent/core and one package per Linux platform
#                 (x64/arm64, gnu/musl) as napi-rs lays them out: the main
#                 package names them as optionalDependencies, each declares
#                 os/cpu/libc, so npm installs only the one that runs.
#   dist/python/  abi3 wheels manylinux2014 (glibc 2.17) and musllinux_1_2,
#                 x86_64 and aarch64, each checked with auditwheel; an sdist.
#   dist/swift/   the Swift package OrpcAgent with its Rust core as a static-library
#                 artifact bundle (x86_64 and aarch64 glibc; Swift ≥ 6.2), and the
#                 bundle's zip with its checksum (scripts/swift-package.sh).
#
# Cross-compiled with zig (PyPI `ziglang`) through cargo-zigbuild; the gnu
# targets link against glibc 2.17. macOS and Windows need Apple's SDK and
# MSVC, which this machine cannot fetch: .github/workflows/release.yml builds
# them on hosted runners (README, "Platforms").
#
# RELEASE_TARGETS narrows the Rust targets (default: all four Linux ones).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIST="$ROOT/dist"
VENV="$ROOT/.venv"
GLIBC=2.17
TARGETS=${RELEASE_TARGETS:-"x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl"}
export PATH="$VENV/bin:$HOME/.cargo/bin:$PATH"
export VIRTUAL_ENV="$VENV"
# A Node module and a Python extension are shared libraries: on musl they
# link the C runtime dynamically (the target's default is a static one,
# which cannot make a cdylib).
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static"

step() { printf '\n== %s\n' "$*"; }

step "tools: zig (PyPI ziglang), cargo-zigbuild, auditwheel, the Rust targets"
python -c 'import ziglang' 2>/dev/null || pip install -q ziglang
python -c 'import auditwheel' 2>/dev/null || pip install -q auditwheel
command -v cargo-zigbuild >/dev/null || cargo install --locked -q cargo-zigbuild
# shellcheck disable=SC2086
rustup target add $TARGETS >/dev/null
rustup component add llvm-tools >/dev/null # llvm-objcopy, for the Swift bundle's arm64 library

# The napi-rs platform name of a Rust target (the suffix of the package and
# of the .node file the generated loader requires).
platform_of() {
  case "$1" in
    x86_64-unknown-linux-gnu) echo linux-x64-gnu ;;
    aarch64-unknown-linux-gnu) echo linux-arm64-gnu ;;
    x86_64-unknown-linux-musl) echo linux-x64-musl ;;
    aarch64-unknown-linux-musl) echo linux-arm64-musl ;;
    *) echo "release: no npm platform for $1" >&2; return 1 ;;
  esac
}

# cargo-zigbuild's target spelling: the gnu targets carry the glibc baseline.
zig_target_of() {
  case "$1" in
    *-linux-gnu) echo "$1.$GLIBC" ;;
    *) echo "$1" ;;
  esac
}

rm -rf "$DIST"
mkdir -p "$DIST/npm" "$DIST/python" "$DIST/stage"

step "npm: the TypeScript build and the generated loader"
(cd "$ROOT/bindings-node" && npx tsc -p tsconfig.json && node scripts/write-cjs-entry.js)
# napi writes the platform packages only inside the project: bindings-node/npm.
(cd "$ROOT/bindings-node" && rm -rf npm && npx napi create-npm-dirs >/dev/null && mv npm "$DIST/stage/npm")

for t in $TARGETS; do
  p=$(platform_of "$t")
  step "npm: $p ($t)"
  (cd "$ROOT" && cargo zigbuild -q --release -p orpc-agent-node --target "$(zig_target_of "$t")")
  cp "$ROOT/target/$t/release/liborpc_agent_node.so" "$DIST/stage/npm/$p/orpc-agent.$p.node"
  cp "$ROOT/LICENSE-MIT" "$ROOT/LICENSE-APACHE" "$DIST/stage/npm/$p/"
  (cd "$DIST/stage/npm/$p" && npm pack -q --pack-destination "$DIST/npm" >/dev/null)
done

step "npm: @orpc-agent/core (no native module of its own; the platform packages carry it)"
CORE="$DIST/stage/core"
mkdir -p "$CORE"
(cd "$ROOT/bindings-node" && cp -r dist index.js index.d.ts API.md README.md LICENSE-MIT LICENSE-APACHE package.json "$CORE/")
node "$ROOT/scripts/release-npm-manifest.mjs" "$CORE/package.json" "$DIST/stage/npm"
(cd "$CORE" && npm pack -q --ignore-scripts --pack-destination "$DIST/npm" >/dev/null)

for t in $TARGETS; do
  case "$t" in
    *-linux-gnu) compat=manylinux2014 ;;
    *-linux-musl) compat=musllinux_1_2 ;;
  esac
  step "python: $compat $t"
  (cd "$ROOT/bindings-python" &&
    maturin build --quiet --release --zig --target "$t" --compatibility "$compat" --out "$DIST/python")
done
step "python: sdist"
(cd "$ROOT/bindings-python" && maturin sdist --out "$DIST/python")

step "python: auditwheel (each manylinux wheel's tag is what its symbols allow)"
for w in "$DIST"/python/*manylinux*.whl; do
  auditwheel show "$w" | tr '\n' ' ' | sed 's/  */ /g'
  echo
done
# auditwheel reads a musllinux wheel against the host's musl, which this
# machine has not: the extension's needed libraries are listed instead (the
# musl C runtime, nothing else).
for w in "$DIST"/python/*musllinux*.whl; do
  so=$(mktemp -d)
  python -m zipfile -e "$w" "$so"
  echo "$(basename "$w") needs: $(readelf -d "$so"/orpc_agent/_native*.so | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
  rm -rf "$so"
done

swift_libs=()
for t in $TARGETS; do
  case "$t" in *-linux-gnu) ;; *) continue ;; esac
  step "swift: the core's static library for $t"
  (cd "$ROOT" && cargo zigbuild -q --release -p orpc-agent-swift --target "$(zig_target_of "$t")")
  swift_libs+=("$t=$ROOT/target/$t/release/liborpc_agent_swift.a")
done
if [ ${#swift_libs[@]} -gt 0 ]; then
  step "swift: the package with its core as an artifact bundle (dist/swift)"
  bash "$ROOT/scripts/swift-package.sh" "$DIST/swift" "${swift_libs[@]}"
fi

step "dist/"
(cd "$DIST" && find npm python swift -maxdepth 1 -type f 2>/dev/null | sort | while read -r f; do
  printf '%8s  %s\n' "$(du -k "$f" | cut -f1)K" "$f"
done)
