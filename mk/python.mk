# --- Python binding (issue 6): wheel orpc-agent, module orpc_agent ----------
# Installs its own dependencies into the repo's .venv, builds the native
# module with `maturin develop` (debug: fast to build) and runs pytest, the
# stubs check (mypy.stubtest) and mypy on a typed usage file.

PY_DIR     := bindings-python
PY_REQS    := $(PY_DIR)/requirements-dev.txt
PY_ENV     := VIRTUAL_ENV=$(CURDIR)/$(VENV) PATH=$(CURDIR)/$(VENV)/bin:$$PATH
# ruff (pinned in $(PY_REQS)) over the binding, the example and the bench,
# all with bindings-python/pyproject.toml's [tool.ruff].
PY_RUFF    := cd $(PY_DIR) && $(CURDIR)/$(VENV)/bin/ruff
PY_RUFF_ON := --config pyproject.toml . ../examples/python-agent ../bench/python

.PHONY: python-deps python-develop test-python build-python lint-python fmt-python demo-python bench-python

python-deps: $(VPY)
	$(VPY) -m pip install --quiet -r $(PY_REQS)

python-develop: python-deps
	cd $(PY_DIR) && $(PY_ENV) maturin develop --quiet

# pytest includes tests/test_stubs.py: mypy.stubtest of the native module's
# .pyi and mypy --strict on tests/typed_usage.py.
test-python: python-develop ## Python binding: pytest (vectors, SI-1…SI-12, MCP, stubtest, mypy)
	cd $(PY_DIR) && $(CURDIR)/$(VPY) -m pytest -q tests

build-python: python-deps ## Python binding: the abi3 wheel (release) in target/wheels
	cd $(PY_DIR) && $(PY_ENV) maturin build --release --quiet

lint-python: python-deps ## Python binding: ruff check + ruff format --check, rustfmt + clippy for the crate, mypy on the package
	$(PY_RUFF) check $(PY_RUFF_ON)
	$(PY_RUFF) format --check $(PY_RUFF_ON)
	$(CARGO) fmt -p orpc-agent-python -- --check
	$(CARGO) clippy -p orpc-agent-python --all-targets -- -D warnings
	cd $(PY_DIR) && $(CURDIR)/$(VPY) -m mypy python/orpc_agent

fmt-python: python-deps
	$(PY_RUFF) format $(PY_RUFF_ON)

demo-python: python-develop ## Python examples: an MCP stdio server driven by a real mcp client; a PydanticAI agent loop
	$(VPY) examples/python-agent/client.py
	$(VPY) examples/python-agent/pydantic_ai_agent.py

bench-python: python-deps ## Python binding benchmark (release build): direct vs governed vs MCP
	cd $(PY_DIR) && $(PY_ENV) maturin develop --release --quiet
	$(VPY) bench/python/bench.py
	cd $(PY_DIR) && $(PY_ENV) maturin develop --quiet

TEST_TARGETS  += test-python
DEMO_TARGETS  += demo-python
BENCH_TARGETS += bench-python
BUILD_TARGETS += build-python
LINT_TARGETS  += lint-python
FMT_TARGETS   += fmt-python
