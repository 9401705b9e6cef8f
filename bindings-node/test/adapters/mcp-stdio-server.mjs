// An MCP server over stdio serving the orders fixture, for mcp.test.mjs.
// `node --test` also loads every file under test/ as a test file: without the
// environment flag this module does nothing.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import * as z from "zod";

import { registerMcpTools } from "@orpc-agent/core";

import { ordersFixture } from "./orders-fixture.mjs";

if (process.env.ORPC_AGENT_MCP_STDIO_SERVER === "1") {
  const { registry, audit } = await ordersFixture();
  const server = new McpServer({ name: "orders-stdio", version: "1.0.0" });
  registerMcpTools(server, registry, { frame: () => ({ actor: { id: "stdio-agent" } }) });

  // Test-only tools standing in for an approval UI and an audit viewer in this process.
  server.registerTool("test_approve", { inputSchema: { requestId: z.string() } }, async ({ requestId }) => {
    await registry.approvals.approve(requestId, { approver: "manager-1" });
    return { content: [{ type: "text", text: "approved" }] };
  });
  server.registerTool("test_last_trace", { outputSchema: { traceparent: z.string().optional() } }, async () => {
    const last = audit.filter((r) => r.event === "finished").find((r) => r.traceparent);
    const structuredContent = { traceparent: last?.traceparent };
    return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
  });

  await server.connect(new StdioServerTransport());
}
