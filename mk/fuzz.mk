# Fuzzing (issue 10): cargo-fuzz targets in fuzz/ for every parser and
# decoder of the core. `make fuzz-smoke` (part of `make test`) builds them
# once and runs each on FUZZ_RUNS inputs from the fixed seed FUZZ_SEED
# (capped at FUZZ_SECONDS): deterministic, so CI fails only when the code
# has a bug those inputs reach, never by a lucky draw; any crash fails it.
# `make fuzz-long` explores for FUZZ_LONG_SECONDS with a random seed. `make fuzz-long`
# is the longer run recorded in docs/fuzzing.md. Seeds are committed in
# fuzz/seeds/<target>/ and copied into fuzz/corpus/<target>/ (git-ignored)
# before each run, so corpora grow locally and CI starts from the seeds.

.PHONY: fuzz-smoke fuzz-long fuzz-build fuzz-tools
TEST_TARGETS += fuzz-smoke

FUZZ_TARGETS   := cbor_meta cbor_roundtrip input_hash manifest_toml declaration \
                  wasm_section trace_context descriptor_json pipeline_answers input_limits
FUZZ_SECONDS   ?= 60
FUZZ_RUNS      ?= 150000
FUZZ_SEED      ?= 1
FUZZ_LONG_SECONDS ?= 300
# No ASan: the core is `forbid(unsafe_code)`; panics, overflows, stack
# exhaustion and timeouts are what we hunt, and libFuzzer catches those
# without it at 2-3x the speed (docs/fuzzing.md).
FUZZ_FLAGS     := --fuzz-dir fuzz -s none  # release + debug assertions and overflow checks
FUZZ_NIGHTLY   := $(CARGO) +nightly

fuzz-tools:
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	@$(FUZZ_NIGHTLY) fuzz --version >/dev/null 2>&1 || $(CARGO) install cargo-fuzz --locked

fuzz-build: fuzz-tools
	$(FUZZ_NIGHTLY) fuzz build $(FUZZ_FLAGS)

fuzz-smoke: fuzz-build ## run every fuzz target briefly; fails on any crash
	FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_SEED=$(FUZZ_SEED) fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-long: fuzz-build ## the longer run per target recorded in docs/fuzzing.md
	fuzz/run.sh $(FUZZ_LONG_SECONDS) $(FUZZ_TARGETS)
