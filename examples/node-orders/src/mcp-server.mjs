// The orders app served as an MCP server over stdio. The approval queue is a
// SQLite file shared with the approvers' console (see demo.mjs), so a request
// made here can be decided by another process and resumed here.
//
//   ORDERS_APPROVALS=/tmp/approvals.sqlite node src/mcp-server.mjs

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

import { registerMcpTools } from "@orpc-agent/core";

import { createDb, createRegistry } from "./app.mjs";

const db = createDb();
const registry = await createRegistry({
  sqlitePath: process.env.ORDERS_APPROVALS,
  // One line per finished invocation on stderr (stdout carries the protocol).
  audit: (record) => {
    if (record.event !== "finished") return;
    const { capabilityId, surface, actorId, outcome, approvalId, traceparent, durationMs } = record;
    process.stderr.write(
      `[audit] ${JSON.stringify({ capabilityId, surface, actorId, outcome, approvalId, traceparent, durationMs })}\n`,
    );
  },
});
const server = new McpServer({ name: "node-orders", version: "1.0.0" });

registerMcpTools(server, registry, {
  // A stdio server's peer is the local user's agent; a network transport
  // would take the actor from its authentication (extra.authInfo).
  frame: () => ({ actor: { id: "local-agent", roles: ["agent"] }, context: { db } }),
});

await server.connect(new StdioServerTransport());
