// The tools the official MCP conformance suite's tool scenarios call
// (@modelcontextprotocol/conformance: tools-call-simple-text,
// tools-call-error, tools-call-with-progress, json-schema-2020-12), declared
// as governed capabilities like the app's own, so each scenario goes
// through the MCP adapter and the pipeline. mcp-http-server.mjs adds them
// when MCP_CONFORMANCE_FIXTURES=1 (`make test-mcp-conformance`); the same
// four are in examples/python-agent/conformance_fixtures.py.

import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure } from "@orpc-agent/core";

const agent = agentProcedure(os.$context());
const fixture = (description, sideEffect = "none") => ({
  agent: { description, expose: { mcp: true }, sideEffect, risk: "low" },
});
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The scenario's schema: $schema 2020-12, $defs, additionalProperties: false.
const address = z.object({ street: z.string().optional(), city: z.string().optional() }).meta({ id: "address" });

export const conformanceRouter = {
  test_simple_text: agent
    .meta(fixture("Returns a simple text (MCP conformance fixture)."))
    .handler(async () => "This is a simple text response for testing."),

  test_error_handling: agent.meta(fixture("Always fails (MCP conformance fixture).")).handler(async () => {
    throw new Error("This tool always fails.");
  }),

  test_tool_with_progress: agent
    .meta(fixture("Reports progress 0, 50, 100 of 100 (MCP conformance fixture)."))
    .handler(async ({ progress }) => {
      progress(0, 100);
      await delay(50);
      progress(50, 100);
      await delay(50);
      progress(100, 100);
      return "Progress reported.";
    }),

  json_schema_2020_12_tool: agent
    .meta(fixture("Tool with JSON Schema 2020-12 features (MCP conformance fixture)."))
    .input(z.strictObject({ name: z.string().optional(), address: address.optional() }))
    .handler(async ({ input }) => ({ received: input })),
};
