# --- The official MCP conformance suite (issue 18, item 7) --------------------
#
#   make test-mcp-conformance   @modelcontextprotocol/conformance (pinned,
#                               MCP_CONFORMANCE_VERSION) against the Node and
#                               the Python example MCP servers over
#                               Streamable HTTP, part of `make test`
#
# The servers: examples/node-orders/src/mcp-http-server.mjs (the SDK's
# StreamableHTTPServerTransport on createMcpExpressApp) and
# examples/python-agent/http_server.py (MCPServer's streamable-http app, run
# by the SDK's uvicorn runner), each with MCP_CONFORMANCE_FIXTURES=1: the
# suite's tool scenarios call tools by fixed names (test_simple_text, …),
# declared as governed capabilities next to the orders ones
# (conformance-fixtures.mjs, conformance_fixtures.py), so each call goes
# through the MCP adapter and the pipeline.
#
# tests/mcp-conformance/run.sh starts a server on a free port, waits for the
# port (bounded), runs each scenario (bounded) with the suite's own baseline
# check (tests/mcp-conformance/{node,python}.yml, the expected failures:
# none), and stops the server on exit (trap). A scenario that passed and now
# fails fails the target; so does a listed expected failure that passes.
# Results (checks.json per scenario): target/mcp-conformance-results/.
# The suite needs Node >= 22: $(NODE22) (mk/node-demo.mk).
#
# Scenarios that run (they apply to a tools-only server):
#   server-initialize, ping, tools-list    lifecycle, ping, tools/list
#   tools-call-simple-text                 test_simple_text: text output
#   tools-call-error                       test_error_handling: isError result
#   tools-call-with-progress               test_tool_with_progress: the core's
#                                          progress as notifications/progress
#   json-schema-2020-12                    json_schema_2020_12_tool: $schema,
#                                          $defs, additionalProperties: false
#                                          listed as declared (issue 18 item 5)
#   server-sse-multiple-streams            concurrent POST streams, one session
#   dns-rebinding-protection               a non-localhost Host/Origin refused
# Scenarios that do not apply, and why:
#   tools-call-image, tools-call-audio, tools-call-embedded-resource,
#   tools-call-mixed-content     a governed output is JSON: text plus
#                                structuredContent, never image, audio or
#                                resource content
#   tools-call-with-logging, logging-set-level
#                                the adapters declare no logging capability
#                                and send no log notifications
#   tools-call-sampling          sampling/createMessage from inside a tool:
#                                the adapters never ask the client's model
#   tools-call-elicitation, elicitation-sep1034-defaults,
#   elicitation-sep1330-enums    elicitation from inside a tool (in-band
#                                approval is issue 18 item 2, not built yet)
#   server-sse-polling           test_reconnection closes the POST stream mid
#                                call and the client resumes from an event
#                                store (SEP-1699): a transport feature the
#                                example servers do not configure (no event
#                                store), nothing the adapters take part in
#   completion-complete          completions are for prompt and resource
#                                arguments: none here
#   resources-list, resources-read-text, resources-read-binary,
#   resources-templates-read, resources-subscribe, resources-unsubscribe,
#   prompts-list, prompts-get-simple, prompts-get-with-args,
#   prompts-get-embedded-resource, prompts-get-with-image
#                                resources and prompts: the adapters serve
#                                tools only
# Without the fixtures, tools-call-simple-text and tools-call-error "pass"
# against any server: the SDK's unknown-tool answer is an isError text.

MCP_CONFORMANCE_VERSION ?= 0.1.16
MCP_CONFORMANCE_DIR      = target/mcp-conformance-$(MCP_CONFORMANCE_VERSION)
MCP_CONFORMANCE_CLI      = $(CURDIR)/$(MCP_CONFORMANCE_DIR)/node_modules/@modelcontextprotocol/conformance/dist/index.js
MCP_CONFORMANCE_RESULTS  = target/mcp-conformance-results
MCP_CONFORMANCE_SCENARIOS := server-initialize ping tools-list tools-call-simple-text tools-call-error \
	tools-call-with-progress json-schema-2020-12 server-sse-multiple-streams dns-rebinding-protection

$(MCP_CONFORMANCE_CLI):
	$(NPM) install --no-save --no-audit --no-fund --loglevel=error --prefix $(MCP_CONFORMANCE_DIR) @modelcontextprotocol/conformance@$(MCP_CONFORMANCE_VERSION)
	@test -f $@

.PHONY: test-mcp-conformance
TEST_TARGETS += test-mcp-conformance
# $$(NODE22): defined in mk/node-demo.mk, read after this file.
.SECONDEXPANSION:
test-mcp-conformance: node-native node-ts node-orders-modules python-develop $$(NODE22) $(MCP_CONFORMANCE_CLI) ## the official MCP conformance suite vs the Node and Python example servers (Streamable HTTP)
	@set -e; start=$$(date +%s); \
	export NODE22=$(NODE22) CONFORMANCE=$(MCP_CONFORMANCE_CLI) NODE_COMPILE_CACHE=$(CURDIR)/target/node-compile-cache; \
	echo "@modelcontextprotocol/conformance $(MCP_CONFORMANCE_VERSION), node $$($(NODE22) --version)"; \
	$(BOUNDED) 5m tests/mcp-conformance/run.sh node tests/mcp-conformance/node.yml $(MCP_CONFORMANCE_RESULTS)/node \
		$(MCP_CONFORMANCE_SCENARIOS) -- $(NODE22) $(NODE_ORDERS)/src/mcp-http-server.mjs; \
	$(BOUNDED) 5m tests/mcp-conformance/run.sh python tests/mcp-conformance/python.yml $(MCP_CONFORMANCE_RESULTS)/python \
		$(MCP_CONFORMANCE_SCENARIOS) -- $(CURDIR)/$(VPY) examples/python-agent/http_server.py; \
	echo "test-mcp-conformance: $$(( $$(date +%s) - start )) s"
