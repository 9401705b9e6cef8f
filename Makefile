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

.PHONY: help build test test-rust test-cross lint fmt demo bench venv

help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build the core and the CLI
	$(CARGO) build --workspace

test: lint test-rust test-cross ## every test suite in the repo, and the lints

test-rust: ## Rust unit, integration and vector tests (core + CLI)
	$(CARGO) test --workspace

$(VPY):
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip
	$(VPY) -m pip install --quiet -r tests/cross/requirements.txt

venv: $(VPY) ## the Python venv the cross tests use
	$(VPY) -m pip install --quiet -r tests/cross/requirements.txt

test-cross: venv ## check the CBOR/hash vectors against an independent implementation (cbor2)
	$(VPY) -m pytest -q tests/cross

lint: ## rustfmt and clippy, warnings are errors
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

demo: ## check and inspect the example declarations
	$(CARGO) build -q -p orpc-agent-cli
	@echo '== orpc-agent inspect examples/declarations/orders.json'
	@$(CLI) inspect examples/declarations/orders.json
	@echo
	@echo '== orpc-agent check examples/declarations/orders.json'
	@$(CLI) check examples/declarations/orders.json
	@echo
	@echo '== orpc-agent check examples/declarations/broken.toml   (six problems, one aggregate error; exit 1 expected)'
	@$(CLI) check examples/declarations/broken.toml; test $$? -eq 1

bench: ## criterion benchmarks of the core
	$(CARGO) bench -p orpc-agent-core
