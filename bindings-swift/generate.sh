#!/usr/bin/env bash
# Regenerates the uniffi Swift sources, C header and module map from the
# built Rust library, with the workspace-pinned bindgen.
#   generate.sh            write them into Sources/
#   generate.sh --check    fail when the committed files differ (drift)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/.." && pwd -P)
CARGO=${CARGO:-cargo}
(cd "$ROOT" && $CARGO build -q -p orpc-agent-swift -p orpc-agent-uniffi-bindgen)
LIB="$ROOT/target/debug/liborpc_agent_swift.so"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$ROOT/target/debug/uniffi-bindgen-swift" --swift-sources --headers --modulemap \
  --module-name orpc_agent_swiftFFI --modulemap-filename module.modulemap \
  "$LIB" "$OUT" >/dev/null
mkdir -p "$OUT/swift" "$OUT/c/include"
mv "$OUT"/*.swift "$OUT/swift/"
mv "$OUT"/*.h "$OUT/module.modulemap" "$OUT/c/include/"
if [ "${1:-}" = --check ]; then
  diff -ru "$HERE/Sources/OrpcAgentFFI" "$OUT/swift" &&
    diff -ru "$HERE/Sources/orpc_agent_swiftFFI/include" "$OUT/c/include" || {
    echo "generated Swift bindings drifted from the Rust crate: run bindings-swift/generate.sh and commit" >&2
    exit 1
  }
  echo "generated Swift bindings are up to date"
else
  rm -rf "$HERE/Sources/OrpcAgentFFI" "$HERE/Sources/orpc_agent_swiftFFI/include"
  mkdir -p "$HERE/Sources/OrpcAgentFFI" "$HERE/Sources/orpc_agent_swiftFFI/include"
  cp "$OUT"/swift/* "$HERE/Sources/OrpcAgentFFI/"
  cp "$OUT"/c/include/* "$HERE/Sources/orpc_agent_swiftFFI/include/"
fi
