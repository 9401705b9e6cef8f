// Governed vs plain MCP tool call, side by side in one process (issue 5 item 9,
// DESIGN §11: governed ≤ 1.2× plain at p50; plain measured here at 13.8 µs).
//
//   plain     McpServer.registerTool with the zod input schema, calling the
//             handler directly
//   governed  registerMcpTools over a registry built from the oRPC procedure
//             with the same schema and the same handler
//
// Both are called through a real MCP Client over InMemoryTransport. Rounds
// alternate between the two so that drift (GC, CPU frequency, the other
// tenants of a shared machine) hits both alike. Run: make bench-node-mcp

import { os } from "@orpc/server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry, registerMcpTools } from "@orpc-agent/core";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const CALLS_PER_ROUND = Number(process.env.BENCH_CALLS ?? 1000);
const WARMUP = 3000;

const Input = z.object({ id: z.string().min(1), limit: z.number().int().max(50).default(10) });
const handler = async ({ input }) => ({ id: input.id, limit: input.limit, status: "shipped" });

async function connect(register) {
  const server = new McpServer({ name: "bench", version: "1.0.0" });
  register(server);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "bench-client", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

const plain = await connect((server) =>
  server.registerTool("orders_get", { description: "Get one order.", inputSchema: Input }, async (args) => {
    // No output schema on either side: the output travels as text (MCP's
    // rule, and the core's `mcp::ok_result`).
    const output = await handler({ input: args });
    return { content: [{ type: "text", text: JSON.stringify(output) }] };
  }),
);

const router = {
  orders: {
    get: agentProcedure(os.$context())
      .meta({ agent: { description: "Get one order.", expose: { mcp: true }, sideEffect: "read", risk: "low" } })
      .input(Input)
      .handler(handler),
  },
};
const registry = await createCapabilityRegistry(router, { approvalStore: "memory" });
const governed = await connect((server) =>
  registerMcpTools(server, registry, { frame: () => ({ actor: { id: "bench" } }) }),
);

const request = { name: "orders_get", arguments: { id: "o-1" } };
for (const client of [plain, governed]) {
  const result = await client.callTool(request);
  if (result.isError || JSON.parse(result.content[0].text).status !== "shipped") {
    throw new Error(`bench setup: unexpected result ${JSON.stringify(result)}`);
  }
  for (let i = 0; i < WARMUP; i++) await client.callTool(request);
}

const samples = { plain: [], governed: [] };
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? ["plain", "governed"] : ["governed", "plain"];
  for (const name of order) {
    const client = name === "plain" ? plain : governed;
    for (let i = 0; i < CALLS_PER_ROUND; i++) {
      const t0 = process.hrtime.bigint();
      await client.callTool(request);
      samples[name].push(Number(process.hrtime.bigint() - t0) / 1000);
    }
  }
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const stats = {};
for (const [name, values] of Object.entries(samples)) {
  values.sort((a, b) => a - b);
  stats[name] = {
    p50: quantile(values, 0.5),
    p90: quantile(values, 0.9),
    p99: quantile(values, 0.99),
    n: values.length,
  };
}
console.log(`MCP tool call over InMemoryTransport, Node ${process.version}, ${ROUNDS}×${CALLS_PER_ROUND} calls each`);
for (const [name, s] of Object.entries(stats)) {
  console.log(
    `  ${name.padEnd(9)} p50 ${s.p50.toFixed(2).padStart(7)} µs   p90 ${s.p90.toFixed(2).padStart(7)} µs   p99 ${s.p99.toFixed(2).padStart(7)} µs   (${Math.round(1e6 / s.p50)} calls/s at p50)`,
  );
}
const ratio = stats.governed.p50 / stats.plain.p50;
console.log(`  governed / plain at p50: ${ratio.toFixed(3)}× (target ≤ 1.2×)`);

await plain.close();
await governed.close();
