# orpc-agent — one dev loop. `make help` lists the targets.
#
#   make test   installs what the tests need (a Python venv with cbor2 for the
#               cross-implementation CBOR check) and runs every suite + lints
#   make demo   builds the CLI and runs it over examples/
#   make bench  criterion benchmarks (figures in BENCHMARKS.md)

CARGO  ?= cargo
PYTHON ?= python3
VENV   := .venv
VPY    := $(VENV)/bin/python
CLI    := target/debug/orpc-agent

.PHONY: help build test test-rust test-cross lint fmt mirrors mirrors-check glue-duplicates module-size demo demo-cli bench bench-core venv release test-release

# Each binding or subsystem adds its targets in mk/<name>.mk and appends
# them to these lists, so `make test`, `make demo`, `make bench`, `make build`,
# `make lint` and `make fmt` run everything without this file naming every part.
TEST_TARGETS  :=
DEMO_TARGETS  :=
BENCH_TARGETS :=
BUILD_TARGETS :=
LINT_TARGETS  :=
FMT_TARGETS   :=
-include mk/*.mk
.DEFAULT_GOAL := help

help:
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: $(BUILD_TARGETS) ## build the core, the CLI and every binding
	$(CARGO) build

test: lint test-rust test-cross $(TEST_TARGETS) ## every test suite in the repo, and the lints

# A bound on each suite's run (after its build), so a test that never
# settles fails `make test` instead of hanging it: node --test and pytest
# also bound each test (mk/node.mk, pytest-timeout); cargo test and swift
# test have no per-test timeout, so their runs are bounded as a whole.
BOUNDED := timeout --kill-after=30s

test-rust: ## Rust unit, integration and vector tests (core + CLI)
	$(CARGO) test --no-run -q
	$(BOUNDED) 15m $(CARGO) test

$(VPY):
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -r tests/cross/requirements.txt

venv: $(VPY) ## the Python venv the cross tests use
	$(VPY) -m pip install --quiet -r tests/cross/requirements.txt

# tests/cross checks the hash vectors (tests/vectors/hash/) twice, neither
# time with the Rust encoder they pin (core/tests/hash_vectors.rs runs that):
#  1. hashnorm.py + cbor2's canonical encoder: the same code
#     gen_hash_vectors.py wrote the vectors with, so this only shows the file
#     is still what the generator makes (not independent of the generator);
#  2. a normaliser and an RFC 8949 §4.2.1 encoder written apart in
#     test_cbor2.py from tests/vectors/README.md (no hashnorm, no cbor2
#     encoder; cbor2 only decodes `input_cbor`), and cbor2's encoder over that
#     normaliser's values: independent of the generator, so a wrong generator
#     fails here. The act/ vectors are not re-checked here.
test-cross: venv ## hash vectors vs. their generator's code and vs. an encoder written apart
	$(VPY) -m pytest -q --timeout=120 tests/cross

lint: $(LINT_TARGETS) mirrors-check glue-duplicates module-size ## rustfmt and clippy (warnings are errors), each binding's linter and formatter check; generated mirrors current; no glue code repeated across bindings
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(CARGO) clippy -p orpc-agent-memory-bench -- -D warnings

# Every hand-written binding module stays under 250 lines (issue 16, item 4;
# decisions.md "No binding module over 250 lines"): generated sources and
# test modules aside.
BINDING_SOURCES := find bindings-node/src bindings-node/native bindings-python/python bindings-python/src \
	bindings-swift/src bindings-swift/Sources/OrpcAgent \( -name '*.ts' -o -name '*.py' -o -name '*.rs' -o -name '*.swift' \) \
	! -path '*/generated/*' ! -path '*/Generated/*' ! -name tests.rs ! -name '*.d.ts'

module-size: ## fail when a hand-written binding module is over 250 lines
	@over=$$($(BINDING_SOURCES) -print0 | xargs -0 wc -l | awk '$$2 != "total" && $$1 > 250'); \
	if [ -n "$$over" ]; then echo "binding modules over 250 lines:"; echo "$$over"; exit 1; fi; \
	echo "binding modules: none over 250 lines ($$($(BINDING_SOURCES) | wc -l) files)"

glue-duplicates: node-deps ## fail when two bindings' Rust glue crates repeat code (jscpd; it belongs in core::ffi)
	node scripts/glue-duplicates.mjs

mirrors: ## write the façades' generated protocol constants (step kinds, sentinels, surfaces, error codes)
	$(CARGO) run -q -p orpc-agent-core --example mirrors

mirrors-check: ## fail when a façade's generated protocol constants are not the core's
	$(CARGO) run -q -p orpc-agent-core --example mirrors -- --check

fmt: $(FMT_TARGETS) ## format the Rust (rustfmt) and each binding (Biome, ruff format, swift format)
	$(CARGO) fmt --all

release: python-deps node-deps ## every artifact this machine can build, into dist/ (npm per platform, wheels, sdist; ~25 min)
	bash scripts/release.sh

test-release: ## install dist/'s artifacts in clean projects and smoke-test them (x64, arm64 under qemu; not in make test)
	bash scripts/test-release.sh

demo: demo-cli $(DEMO_TARGETS) ## run every example end to end

demo-cli: ## check and inspect the example declarations
	$(CARGO) build -q -p orpc-agent-cli
	@echo '== orpc-agent inspect examples/declarations/orders.json'
	@$(CLI) inspect examples/declarations/orders.json
	@echo
	@echo '== orpc-agent check examples/declarations/orders.json'
	@$(CLI) check examples/declarations/orders.json
	@echo
	@echo '== orpc-agent check examples/declarations/broken.toml   (six problems, one aggregate error; exit 1 expected)'
	@$(CLI) check examples/declarations/broken.toml; test $$? -eq 1
	@echo
	@echo '== std: metadata: encode a tool definition to CBOR, decode it, check it per position'
	@mkdir -p target/demo
	$(CLI) meta encode examples/act/tool-definition.json -o target/demo/tool-definition.cbor
	$(CLI) meta decode target/demo/tool-definition.cbor --diag
	$(CLI) meta check --position tool-definition target/demo/tool-definition.cbor
	@echo '-- the same keys are not allowed in per-call metadata (exit 1 expected):'
	@$(CLI) meta check --position tool-call target/demo/tool-definition.cbor; test $$? -eq 1
	@echo
	@echo '== component metadata: manifest → act:component section of a .wasm file'
	$(CLI) manifest check examples/act/act.toml
	@printf '\000asm\001\000\000\000' > target/demo/empty.wasm
	$(CLI) component embed --manifest examples/act/act.toml target/demo/empty.wasm -o target/demo/orders.wasm
	$(CLI) component inspect target/demo/orders.wasm
	@echo
	@echo '== the approval input hash of a refund (the same in every binding)'
	$(CLI) hash --capability orders.refund examples/act/refund-input.json

bench: bench-core $(BENCH_TARGETS) ## every benchmark (figures in BENCHMARKS.md)

bench-core: ## criterion benchmarks of the core, and bytes per capability
	$(CARGO) bench -p orpc-agent-core
	$(CARGO) run --release -q -p orpc-agent-memory-bench
