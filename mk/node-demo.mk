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
