#!/usr/bin/env bash
# `make test-swift-package`: the Swift package as a user adds it (issue 17).
# A new project adds OrpcAgent by path — the package scripts/swift-package.sh
# writes, whose Rust core is a prebuilt artifact bundle — builds with no
# Rust toolchain and no LIBRARY_PATH, and runs the README's quick start,
# which must print what the README says.
#
# Swift 6.2 or later reads static-library artifact bundles
# (scripts/swift62.sh: a `swift` of that version on PATH, else Debian sid's).
# The package is dist/swift's (make release), else built here from
# `make swift-lib-release`.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO"
PKG=$REPO/dist/swift/OrpcAgent
if [ ! -f "$PKG/Package.swift" ]; then
  make -s swift-lib-release
  bash scripts/swift-package.sh "$REPO/target/swift-package"
  PKG=$REPO/target/swift-package/OrpcAgent
fi
echo "test-swift-package: $PKG"

# The project lives under the repository: the chroot sees only that.
APP=$REPO/target/swift-package-app
rm -rf "$APP"
mkdir -p "$APP/Sources/QuickStart"
cp examples/swift-cli/Sources/ReadmeQuickStart/main.swift "$APP/Sources/QuickStart/"
cat >"$APP/Package.swift" <<SWIFT
// swift-tools-version:5.9
import PackageDescription

let package = Package(
    name: "QuickStart",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "OrpcAgent", path: "$PKG")],
    targets: [
        .executableTarget(name: "QuickStart", dependencies: [.product(name: "OrpcAgent", package: "OrpcAgent")])
    ]
)
SWIFT

bash scripts/swift62.sh "swift --version 2>&1 | head -1 && cd '$APP' && env -u LIBRARY_PATH swift build -q && \
  timeout 120 .build/debug/QuickStart > '$APP/out.txt'"
python3 tests/readme/swift_snippets.py output "$APP/out.txt"
echo "test-swift-package: ok"
