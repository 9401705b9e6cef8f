#!/usr/bin/env bash
# Run a command with a Swift toolchain available.
#
#   scripts/swift.sh provision          # build the chroot once (idempotent), print timings
#   scripts/swift.sh run <command...>   # run <command> (bash -c) in the repo root, with `swift`
#   scripts/swift.sh status             # "native", "ready" or "missing"
#
# Where `swift` is on PATH (macOS, Linux with a toolchain) `run` executes the command
# directly. Elsewhere (a fresh Debian 12 CI machine: no Swift, swift.org unreachable)
# it provisions, once, a Debian trixie chroot holding Debian's `swiftlang` 6.0.3 and
# runs the command inside it, with the repository bind-mounted at the same absolute
# path so paths (the Rust library under target/, the Package.swift) are identical
# inside and out. Mounts are always undone on exit (trap), even on failure.
#
# Environment:
#   SWIFT_CHROOT     where the chroot lives (default /srv/orpc-agent-swift); cached
#                    across runs: a stamp file marks a complete provisioning
#   DEBIAN_MIRROR    the archive to bootstrap from (default: the host's apt source)
#   SWIFT_NATIVE=0   ignore a `swift` on PATH and use the chroot anyway
#   SWIFT_SUITE      the Debian suite of the chroot (default trixie: swiftlang 6.0.3;
#                    sid has 6.2, which links a static library from an artifact bundle:
#                    `make test-swift-package` uses SWIFT_SUITE=sid and its own SWIFT_CHROOT)
#
# Needs root for the chroot path (debootstrap, mount, chroot); the CI machine runs as root.
set -euo pipefail

ROOT=${SWIFT_CHROOT:-/srv/orpc-agent-swift}
STAMP="$ROOT/.orpc-agent-swiftlang-ready"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
LOG_DIR=${TMPDIR:-/tmp}
APT_OPTS=(-o Acquire::Retries=5 -o DPkg::Lock::Timeout=300 -y -q --no-install-recommends)
# Everything `swift build`/`swift test` needs on Linux: the toolchain, the C and C++
# runtime headers it links against, and git (SwiftPM shells out to it).
PACKAGES=(swiftlang libc6-dev libstdc++-14-dev git ca-certificates)

say() { echo "[swift.sh] $*" >&2; }

# Time a step and report it, so CI logs show where provisioning spends its minutes.
timed() {
  local start=$SECONDS
  "$@"
  say "$((SECONDS - start))s: $*"
}

# Retry a command a few times with a growing pause: mirrors hiccup, CI must not.
retry() {
  local attempt
  for attempt in 1 2 3 4; do
    "$@" && return 0
    say "attempt $attempt failed: $*"
    sleep $((attempt * 10))
  done
  return 1
}

host_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && awk '/^URIs:/ && $2 !~ /security/ {print $2}' "$f"
  done
  [ -f /etc/apt/sources.list ] && awk '$1 == "deb" && $2 !~ /security/ {print $2}' /etc/apt/sources.list
  return 0
}

mounts_under_root() { awk -v r="$ROOT/" 'index($2, r) == 1 {print $2}' /proc/mounts; }

unmount_all() { # deepest first; never leave /proc or the repository mounted
  local m
  mounts_under_root | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" || say "could not unmount $m"
  done
}

in_chroot() {
  chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

bootstrap_once() {
  rm -rf --one-file-system "$ROOT"
  debootstrap --variant=minbase "${SWIFT_SUITE:-trixie}" "$ROOT" "$MIRROR" >"$LOG_DIR/orpc-agent-debootstrap.log" 2>&1 || {
    tail -20 "$LOG_DIR/orpc-agent-debootstrap.log" >&2
    return 1
  }
}

provision() {
  [ -f "$STAMP" ] && return 0
  mkdir -p "$(dirname "$ROOT")"
  exec 8>"$ROOT.provision.lock"
  flock 8
  [ -f "$STAMP" ] && return 0 # provisioned while we waited
  [ "$(id -u)" = 0 ] || { say "provisioning the Swift chroot needs root (or put swift on PATH)"; exit 1; }
  MIRROR=${DEBIAN_MIRROR:-$(host_mirror | head -n 1)}
  [ -n "$MIRROR" ] || { say "no Debian mirror in the host's apt sources; set DEBIAN_MIRROR"; exit 1; }
  local start=$SECONDS
  unmount_all
  if [ -n "$(mounts_under_root)" ]; then say "refusing to wipe $ROOT: still mounted"; exit 1; fi
  if ! command -v debootstrap >/dev/null; then
    timed retry apt-get -o Acquire::Retries=5 update -q
    timed retry env DEBIAN_FRONTEND=noninteractive apt-get install "${APT_OPTS[@]}" debootstrap
  fi
  timed retry bootstrap_once
  # sid's Release file is valid for a week; a mirror that serves a snapshot
  # (as this network's does) would be refused as expired. The chroot only
  # builds and runs the tests.
  [ "${SWIFT_SUITE:-trixie}" = trixie ] ||
    echo 'Acquire::Check-Valid-Until "false";' >"$ROOT/etc/apt/apt.conf.d/99orpc-agent-snapshot"
  mount -t proc proc "$ROOT/proc"
  trap unmount_all EXIT
  timed retry in_chroot apt-get -o Acquire::Retries=5 update -q
  timed retry in_chroot apt-get install "${APT_OPTS[@]}" "${PACKAGES[@]}"
  in_chroot apt-get clean
  in_chroot swift --version >&2
  unmount_all
  trap - EXIT
  touch "$STAMP"
  say "provisioned $ROOT in $((SECONDS - start))s"
}

native_swift() { [ "${SWIFT_NATIVE:-1}" != 0 ] && command -v swift >/dev/null; }

run() {
  [ $# -gt 0 ] || { say "usage: $0 run <command...>"; exit 2; }
  if native_swift; then
    (cd "$REPO" && bash -c "$*")
    return
  fi
  provision
  # One run at a time: a second run's exit would unmount the first's
  # bind mounts (make -j, two shells).
  exec 9>"$ROOT.lock"
  flock 9
  trap unmount_all EXIT
  mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
  mkdir -p "$ROOT$REPO"
  mountpoint -q "$ROOT$REPO" || mount --bind "$REPO" "$ROOT$REPO"
  # /dev/null, /dev/urandom: Foundation and XCTest open them.
  mountpoint -q "$ROOT/dev" || mount --bind /dev "$ROOT/dev"
  in_chroot bash -c "cd '$REPO' && $*"
}

case "${1:-}" in
provision) provision ;;
run) shift; run "$@" ;;
status)
  if native_swift; then echo native; elif [ -f "$STAMP" ]; then echo ready; else echo missing; fi ;;
*) say "usage: $0 provision | run <command...> | status"; exit 2 ;;
esac
