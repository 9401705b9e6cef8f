#!/usr/bin/env bash
# The Swift package as a user adds it: OrpcAgent with the Rust core prebuilt,
# no Rust toolchain and no LIBRARY_PATH (issue 17).
#
#   scripts/swift-package.sh [OUT [TRIPLE=LIBRARY ...]]   # OUT: default dist/swift
#
# Writes, from the release static libraries already built:
#   OUT/OrpcAgentCore.artifactbundle(.zip)  the core as a SwiftPM artifact bundle
#       (SE-0467 `staticLibrary`: one variant per Linux triple built, the uniffi
#       header and a module map without the Apple-only `use` lines); `.sha256`
#       holds what `swift package compute-checksum` prints for the zip;
#   OUT/OrpcAgent/   the package: the committed sources of bindings-swift and a
#       Package.swift whose core is that bundle (a binary target by path), so
#       `.package(path: "…/OrpcAgent")` builds with nothing else installed.
#       A release publishes the zip and points the binary target at its URL
#       and checksum instead (see bindings-swift/README.md).
#
# The libraries, one per Linux triple, are named on the command line
# (`make release` passes its zig builds, glibc 2.17); with none, this
# machine's `make swift-lib-release` (target/release) for its own triple.
# SwiftPM reads static-library bundles from Swift 6.2 (Debian's 6.0.3
# refuses them: "does not contain a binary artifact").
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
OUT=${1:-$REPO/dist/swift}
shift $(($# > 0 ? 1 : 0))
SRC=$REPO/bindings-swift
NAME=orpc_agent_swiftFFI # the binary target, its artifact and its module: one name
BUNDLE=$OUT/OrpcAgentCore.artifactbundle
VERSION=$(cd "$REPO" && cargo pkgid -p orpc-agent-swift | sed 's/.*[#@]//')

rm -rf "$BUNDLE" "$BUNDLE.zip" "$OUT/OrpcAgent"
mkdir -p "$BUNDLE/include"
cp "$SRC/Sources/$NAME/include/$NAME.h" "$BUNDLE/include/"
# uniffi's module map `use`s Darwin's modules, which Linux does not have.
grep -v '^[[:space:]]*use "' "$SRC/Sources/$NAME/include/module.modulemap" >"$BUNDLE/include/module.modulemap"

host=$(rustc -vV | awk '/^host:/ {print $2}')
# llvm-objcopy reads every architecture (rustup's llvm-tools); the system
# objcopy only the host's.
OBJCOPY=$(ls "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-objcopy 2>/dev/null | head -n 1 || true)
strip_debug() { # archive in, archive out
  if [ -n "$OBJCOPY" ]; then
    "$OBJCOPY" --strip-debug "$1" "$2"
  elif [ "$3" = "$host" ]; then
    objcopy --strip-debug "$1" "$2"
  else
    echo "swift-package: no llvm-objcopy (rustup component add llvm-tools): $3 keeps its debug info" >&2
    cp "$1" "$2"
  fi
}
libs=("$@")
[ ${#libs[@]} -gt 0 ] || libs=("$host=$REPO/target/release/liborpc_agent_swift.a")
variants=()
for pair in "${libs[@]}"; do
  triple=${pair%%=*} lib=${pair#*=}
  [ -f "$lib" ] || { echo "swift-package: no $lib (for $triple)" >&2; exit 1; }
  mkdir -p "$BUNDLE/$triple"
  # Debug info is most of the archive and no user's build needs it.
  strip_debug "$lib" "$BUNDLE/$triple/liborpc_agent_swift.a" "$triple"
  variants+=("$triple")
done

python3 - "$BUNDLE" "$NAME" "$VERSION" "${variants[@]}" <<'PY'
import json, sys
bundle, name, version, *triples = sys.argv[1:]
variants = [
    {
        "path": f"{t}/liborpc_agent_swift.a",
        # Debian's Swift names its host x86_64-pc-linux-gnu, swift.org's
        # x86_64-unknown-linux-gnu: the same platform.
        "supportedTriples": [t, t.replace("-unknown-", "-pc-")],
        "staticLibraryMetadata": {"headerPaths": ["include"], "moduleMapPath": "include/module.modulemap"},
    }
    for t in triples
]
info = {"schemaVersion": "1.0", "artifacts": {name: {"type": "staticLibrary", "version": version, "variants": variants}}}
with open(f"{bundle}/info.json", "w") as f:
    json.dump(info, f, indent=2)
    f.write("\n")
PY
# Same bytes for the same inputs: fixed times, sorted entries, no extra attributes.
python3 - "$OUT" <<'PY'
import os, sys, zipfile
out = sys.argv[1]
with zipfile.ZipFile(f"{out}/OrpcAgentCore.artifactbundle.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(f"{out}/OrpcAgentCore.artifactbundle"):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            entry = zipfile.ZipInfo(os.path.relpath(path, out), date_time=(2020, 1, 1, 0, 0, 0))
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as f:
                z.writestr(entry, f.read())
PY
sha256sum "$BUNDLE.zip" | awk '{print $1}' >"$BUNDLE.zip.sha256"

# The package: the committed Swift sources, the bundle as its core.
PKG=$OUT/OrpcAgent
mkdir -p "$PKG/Sources"
cp -R "$SRC/Sources/OrpcAgent" "$SRC/Sources/OrpcAgentFFI" "$PKG/Sources/"
cp -R "$BUNDLE" "$PKG/"
cp "$SRC/README.md" "$REPO/LICENSE-APACHE" "$REPO/LICENSE-MIT" "$PKG/"
cat >"$PKG/Package.swift" <<EOF
// swift-tools-version:5.9
// OrpcAgent $VERSION with its Rust core prebuilt (scripts/swift-package.sh).
// Linux x64/arm64 (glibc), Swift 6.2 or later: the core is a static-library
// artifact bundle. A release replaces the binary target's path with the
// published zip's url and checksum (\`$(cat "$BUNDLE.zip.sha256")\`).
import PackageDescription

let package = Package(
    name: "OrpcAgent",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [.library(name: "OrpcAgent", targets: ["OrpcAgent"])],
    targets: [
        .binaryTarget(name: "$NAME", path: "OrpcAgentCore.artifactbundle"),
        .target(
            name: "OrpcAgentFFI", dependencies: ["$NAME"], path: "Sources/OrpcAgentFFI",
            linkerSettings: [
                // What Rust's std needs from the system on Linux.
                .linkedLibrary("m", .when(platforms: [.linux])),
                .linkedLibrary("dl", .when(platforms: [.linux])),
                .linkedLibrary("pthread", .when(platforms: [.linux])),
                .linkedLibrary("gcc_s", .when(platforms: [.linux])),
            ]),
        .target(name: "OrpcAgent", dependencies: ["OrpcAgentFFI"], path: "Sources/OrpcAgent"),
    ]
)
EOF
echo "swift-package: $PKG (core for ${variants[*]}), $BUNDLE.zip sha256 $(cat "$BUNDLE.zip.sha256")"
