// The release smoke test of @orpc-agent/core (scripts/test-release.sh), run
// in a clean project outside the repository with the packed tarballs
// installed: a governed call, an approval round trip on SQLite, and an MCP
// tools/list through the SDK's own Client. Prints one line per check.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry, registerMcpTools } from "@orpc-agent/core";

const paid = [];
const router = {
  orders: {
    search: agentProcedure(os)
      .meta({ agent: { description: "Search orders.", expose: { mcp: true, direct: true }, sideEffect: "read", risk: "low" } })
      .input(z.object({ email: z.string() }))
      .handler(async ({ input }) => [{ id: "o-1", email: input.email }]),
    refund: agentProcedure(os)
      .meta({
        agent: {
          description: "Refund an order.",
          expose: { mcp: true, direct: true },
          sideEffect: "external",
          risk: "high",
          approval: { required: true },
        },
      })
      .input(z.object({ id: z.string(), amount: z.number() }))
      .handler(async ({ input }) => {
        paid.push(input);
        return { refunded: input.amount };
      }),
  },
};

const db = join(mkdtempSync(join(tmpdir(), "orpc-agent-release-")), "approvals.db");
const registry = await createCapabilityRegistry(router, { approvalStore: { sqlite: db } });
const frame = { surface: "direct", actor: { id: "u1" } };

const found = await registry.invoke("orders.search", { email: "ana@example.com" }, frame);
assert.deepEqual(found, { status: "ok", output: [{ id: "o-1", email: "ana@example.com" }] });
console.log("governed call: ok");

const gated = await registry.invoke("orders.refund", { id: "o-1", amount: 12.5 }, frame);
assert.equal(gated.status, "approval_required");
assert.equal(paid.length, 0);
await registry.approvals.approve(gated.request.id, { approver: "lead" });
assert.deepEqual(await registry.resume(gated.request.id), { status: "ok", output: { refunded: 12.5 } });
await assert.rejects(registry.resume(gated.request.id), { code: "APPROVAL_CONSUMED" });
assert.equal(paid.length, 1);
console.log("approval round trip on SQLite: ok");

const server = new McpServer({ name: "release-smoke", version: "0.0.0" });
registerMcpTools(server, registry);
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const client = new Client({ name: "smoke", version: "0.0.0" });
await client.connect(clientSide);
const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name).sort(), ["orders_refund", "orders_search"]);
await client.close();
registry.close();
console.log(`MCP tools/list: ${tools.map((t) => t.name).join(", ")}`);
