#!/usr/bin/env bash
# Runs fuzz targets one after another for a fixed time each (mk/fuzz.mk).
#   fuzz/run.sh SECONDS TARGET...
# With FUZZ_RUNS set, each target runs that many inputs from the fixed
# FUZZ_SEED (default 1) instead, SECONDS only capping it: the same inputs on
# every machine from the same seeds, so a verdict depends on the code, not
# on luck or on the machine's speed (a slower machine runs a prefix of the
# same sequence). `make fuzz-smoke` (in `make test`) runs so; `make
# fuzz-long` explores with a random seed.
# Seeds (fuzz/seeds/<target>/, committed) are merged into the working
# corpus (fuzz/corpus/<target>/, git-ignored) first. A crash, a timeout or
# an out-of-memory stops the run with the reproducer in
# fuzz/artifacts/<target>/ and a non-zero status. One line of figures per
# target is appended to fuzz/artifacts/summary.tsv.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=$1
shift
# The binaries `cargo +nightly fuzz build --fuzz-dir fuzz -s none` made
# (mk/fuzz.mk fuzz-build); running them directly skips a cargo check per target.
bin="fuzz/target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"
mkdir -p fuzz/artifacts
for t in "$@"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  cp -n "fuzz/seeds/$t/"* "fuzz/corpus/$t/" 2>/dev/null || true
  log="fuzz/artifacts/$t/last-run.log"
  fixed=()
  if [ -n "${FUZZ_RUNS:-}" ]; then
    fixed=(-runs="$FUZZ_RUNS" -seed="${FUZZ_SEED:-1}")
    echo "== fuzz $t ($FUZZ_RUNS inputs from seed ${FUZZ_SEED:-1}, at most ${seconds} s)"
  else
    echo "== fuzz $t (${seconds} s)"
  fi
  if ! "$bin/$t" "fuzz/corpus/$t" -artifact_prefix="fuzz/artifacts/$t/" \
      -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=10 -print_final_stats=1 "${fixed[@]}" \
      >"$log" 2>&1; then
    tail -60 "$log"
    echo "FAIL: fuzz target $t crashed; reproducer in fuzz/artifacts/$t/" >&2
    exit 1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
  corpus=$(find "fuzz/corpus/$t" -type f | wc -l)
  echo "   $execs executions, $cov, corpus $corpus"
  printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$seconds" "$execs" "$cov" "$corpus" >>fuzz/artifacts/summary.tsv
done
