#!/usr/bin/env bash
# Run a command like `scripts/swift.sh run`, with Swift 6.2 or later: a
# `swift` of that version on PATH, else Debian sid's swiftlang (6.2) in its
# own chroot (scripts/swift.sh with SWIFT_SUITE=sid; provisioned once,
# about 90 s and 3.4 GB).
#
# Why a second toolchain: from 6.2 the driver starts a handler with
# `Task.immediate` (Race.swift, `startTask`), and 6.0 with `Task { }`;
# `make test` runs the Swift suite on both (test-swift, test-swift-6.2); a
# machine whose own Swift is older than 6.2 skips the second, saying so.
# `make test-swift-package` needs 6.2 to read an artifact bundle.
#
#   scripts/swift62.sh <command...>
#   SWIFT_SID_CHROOT   where the sid chroot lives (default /srv/orpc-agent-swift-sid)
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
if command -v swift >/dev/null && swift --version 2>/dev/null | grep -Eq 'Swift version (6\.([2-9]|[1-9][0-9])|[7-9])'; then
  export SWIFT_NATIVE=1
elif command -v swift >/dev/null && [ "${SWIFT_NATIVE:-}" != 0 ]; then
  # A machine with its own older Swift (Xcode 16, a 6.0/6.1 toolchain) has
  # no chroot to fall back on: the 6.2 run is skipped, and says so. CI (no
  # Swift on PATH) always takes the chroot below.
  echo "[swift62] SKIPPED: $(swift --version 2>&1 | head -1) is older than 6.2; install Swift 6.2 to run: $*" >&2
  exit 0
else
  export SWIFT_NATIVE=0 SWIFT_SUITE=sid SWIFT_CHROOT=${SWIFT_SID_CHROOT:-/srv/orpc-agent-swift-sid}
fi
exec bash "$REPO/scripts/swift.sh" run "$@"
