#!/usr/bin/env bash
# The Rust core as an XCFramework for Apple platforms (issue 17): macOS
# (arm64 + x86_64), iOS devices (arm64) and the iOS simulator (arm64 +
# x86_64), each slice the static library with the uniffi header and module
# map; zipped, with the checksum a `.binaryTarget(url:checksum:)` names.
#
#   scripts/swift-xcframework.sh [OUT]   # default dist/swift; macOS only
#
# Needs Xcode (xcodebuild, lipo) and the five Rust targets: it runs in the
# release workflow's `swift-apple` job (.github/workflows/release.yml). It
# cannot run on the Linux build machine (no Apple SDK can be fetched there).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
OUT=${1:-$REPO/dist/swift}
NAME=orpc_agent_swiftFFI
LIB=liborpc_agent_swift.a
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

for t in aarch64-apple-darwin x86_64-apple-darwin aarch64-apple-ios aarch64-apple-ios-sim x86_64-apple-ios; do
  (cd "$REPO" && cargo build -q --release -p orpc-agent-swift --target "$t")
done
# The header and module map in a directory of their own under Headers/:
# an app that links two XCFrameworks each with a module.modulemap at the
# root of Headers/ gets two build commands writing one file; clang finds a
# module map one directory down when it looks a module up by name.
mkdir -p "$WORK/headers/$NAME" "$WORK/macos" "$WORK/ios-sim"
cp "$REPO/bindings-swift/Sources/$NAME/include/$NAME.h" "$REPO/bindings-swift/Sources/$NAME/include/module.modulemap" "$WORK/headers/$NAME/"
lipo -create "$REPO"/target/{aarch64,x86_64}-apple-darwin/release/$LIB -output "$WORK/macos/$LIB"
lipo -create "$REPO"/target/{aarch64-apple-ios-sim,x86_64-apple-ios}/release/$LIB -output "$WORK/ios-sim/$LIB"

mkdir -p "$OUT"
rm -rf "$OUT/$NAME.xcframework" "$OUT/$NAME.xcframework.zip"
xcodebuild -create-xcframework \
  -library "$WORK/macos/$LIB" -headers "$WORK/headers" \
  -library "$REPO/target/aarch64-apple-ios/release/$LIB" -headers "$WORK/headers" \
  -library "$WORK/ios-sim/$LIB" -headers "$WORK/headers" \
  -output "$OUT/$NAME.xcframework"
(cd "$OUT" && zip -X -q -r "$NAME.xcframework.zip" "$NAME.xcframework")
shasum -a 256 "$OUT/$NAME.xcframework.zip" | awk '{print $1}' >"$OUT/$NAME.xcframework.zip.sha256"
echo "xcframework: $OUT/$NAME.xcframework.zip sha256 $(cat "$OUT/$NAME.xcframework.zip.sha256")"
