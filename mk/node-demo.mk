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

.PHONY: demo-node bench-node-mcp node-orders-link
DEMO_TARGETS  += demo-node
BENCH_TARGETS += bench-node-mcp

node-orders-link: build-node
	@mkdir -p $(NODE_ORDERS)/node_modules/@orpc-agent
	@for dep in bindings-node/node_modules/*; do \
		ln -sfn ../../../$$dep $(NODE_ORDERS)/node_modules/$$(basename $$dep); \
	done
	@ln -sfn ../../../../bindings-node $(NODE_ORDERS)/node_modules/@orpc-agent/core

demo-node: node-orders-link ## the Node orders app end to end over MCP (stdio) and the AI SDK
	node $(NODE_ORDERS)/src/demo.mjs

bench-node-mcp: build-node ## governed vs plain MCP tool call over InMemoryTransport (p50, ratio)
	node bindings-node/bench/mcp.bench.mjs

# The AI SDK adapter's suite against `ai` 7 (not in `make test`: ai 7 declares
# Node >= 22 and CI runs Node 20, where npm installs it with an engine
# warning). A throw-away copy of the built package whose `ai` is ai@7, so the
# checkout's node_modules stay untouched.
.PHONY: test-node-ai7
test-node-ai7: node-native node-ts ## AI SDK adapter tests against ai@7 (temporary install)
	@set -e; R=$$(mktemp -d); trap 'rm -rf "$$R"' EXIT; B=$(CURDIR)/bindings-node; \
	(cd $$R && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error ai@7 >/dev/null); \
	mkdir -p $$R/pkg/node_modules $$R/t/node_modules/@orpc-agent; \
	cp -r $$B/dist $$B/index.js $$B/package.json $$B/*.node $$R/pkg/; \
	for d in $$B/node_modules/*; do ln -s $$d $$R/pkg/node_modules/; done; \
	rm $$R/pkg/node_modules/ai $$R/pkg/node_modules/@ai-sdk; \
	ln -s $$R/node_modules/ai $$R/node_modules/@ai-sdk $$R/pkg/node_modules/; \
	for d in $$R/pkg/node_modules/*; do ln -s $$(readlink -f $$d) $$R/t/node_modules/; done; \
	ln -s $$R/pkg $$R/t/node_modules/@orpc-agent/core; \
	cp -r $$B/test/adapters $$R/t/; \
	echo "ai $$(node -p "require('$$R/node_modules/ai/package.json').version")"; \
	cd $$R/t && node --test adapters/ai-sdk.test.mjs
