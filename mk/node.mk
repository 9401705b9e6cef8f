# --- Node binding: @orpc-agent/core (issue 5) ------------------------------
# npm ci from the committed lockfile, napi build (debug for tests), tsc,
# node --test. The native build is `cargo build -p orpc-agent-node` through
# @napi-rs/cli, which also regenerates index.js / index.d.ts.
NODE_DIR := bindings-node
NPM      ?= npm
# Every node --test run: files one at a time, and each test bounded, so a
# regression that never settles fails its test instead of hanging the run.
NODE_TEST := node --test --test-concurrency=1 --test-timeout=120000

.PHONY: test-node build-node lint-node fmt-node bench-node node-deps node-native node-ts
# Biome, from the lockfile (bindings-node's devDependencies), with the repo
# root's biome.jsonc: bindings-node's src, test, scripts and bench, and the
# examples' .mjs. `biome ci` lints and checks the formatting, writing nothing.
BIOME := $(NODE_DIR)/node_modules/.bin/biome

$(NODE_DIR)/node_modules/.package-lock.json: $(NODE_DIR)/package-lock.json
	cd $(NODE_DIR) && $(NPM) ci --no-audit --no-fund

node-deps: $(NODE_DIR)/node_modules/.package-lock.json

node-native: node-deps
	cd $(NODE_DIR) && npx napi build --platform --esm --js index.js --dts index.d.ts --no-dts-cache

node-ts: node-deps
	cd $(NODE_DIR) && npx tsc -p tsconfig.json && node scripts/write-cjs-entry.js

build-node: node-deps ## Node binding: release native module + TypeScript
	cd $(NODE_DIR) && npx napi build --platform --release --esm --js index.js --dts index.d.ts --no-dts-cache
	$(MAKE) node-ts

test-node: node-native node-ts ## Node binding: vectors, SI-1…SI-12, oRPC integration (node --test)
	cd $(NODE_DIR) && $(NODE_TEST) test/*.test.js test/adapters/*.test.mjs test/hardening/*.test.mjs

lint-node: node-ts ## Node binding: Biome (lint + format check), tsc --noEmit, clippy, generated .d.ts drift
	$(BIOME) ci
	cd $(NODE_DIR) && npx tsc --noEmit -p tsconfig.json && npx tsc -p tsconfig.test.json
	$(CARGO) clippy -p orpc-agent-node --all-targets -- -D warnings
	cd $(NODE_DIR) && node scripts/check-dts.js

fmt-node: node-deps
	$(BIOME) format --write

bench-node: node-deps ## Node binding: registry.invoke vs bare oRPC call (release build)
	cd $(NODE_DIR) && npx napi build --platform --release --esm --js index.js --dts index.d.ts --no-dts-cache
	$(MAKE) node-ts
	cd $(NODE_DIR) && node bench/invoke.js
	cd $(NODE_DIR) && node bench/cedar.js

TEST_TARGETS  += test-node
BUILD_TARGETS += build-node
LINT_TARGETS  += lint-node
FMT_TARGETS   += fmt-node
BENCH_TARGETS += bench-node
