# --- Agent gateway, remote AI SDK adapter, progress (issue 9) ----------------
#
#   make test-gateway    the gateway over loopback HTTP (@orpc/server/node +
#                        @orpc/client + ai's mock model) and progress (direct,
#                        a real MCP client) — bindings-node/test/gateway
#   make demo-gateway    examples/node-gateway end to end on 127.0.0.1
#   make bench-gateway   invoke through the gateway vs the same procedure over
#                        @orpc/client without governance (loopback, release)

NODE_GATEWAY := examples/node-gateway

.PHONY: test-gateway demo-gateway bench-gateway node-gateway-link

test-gateway: node-native node-ts ## agent gateway + progress (node --test over loopback HTTP)
	cd bindings-node && $(NODE_TEST) test/gateway/*.test.mjs

node-gateway-link: build-node
	@mkdir -p $(NODE_GATEWAY)/node_modules/@orpc-agent
	@for dep in bindings-node/node_modules/*; do \
		ln -sfn ../../../$$dep $(NODE_GATEWAY)/node_modules/$$(basename $$dep); \
	done
	@ln -sfn ../../../../bindings-node $(NODE_GATEWAY)/node_modules/@orpc-agent/core

demo-gateway: node-gateway-link ## the agent gateway on loopback: remote AI SDK tools, a bound presentation through approval
	node $(NODE_GATEWAY)/src/demo.mjs

bench-gateway: build-node ## gateway invoke vs plain oRPC over loopback HTTP (p50, ratio)
	cd bindings-node && node bench/gateway.bench.mjs

TEST_TARGETS  += test-gateway
DEMO_TARGETS  += demo-gateway
BENCH_TARGETS += bench-gateway
