// Invoke through the agent gateway vs the same oRPC procedure without
// governance, both over loopback HTTP in one run (issue 9 item 6, target:
// gateway ≤ 1.2× plain at p50).
//
//   plain    the procedure mounted as an ordinary oRPC route, called with
//            @orpc/client's fetch link (zod input validation, the handler)
//   gateway  the same procedure in a capability registry, behind
//            createAgentGateway on the same RPCHandler and server, called as
//            `invoke({capability, input})` with the same client and an
//            authenticated actor (every stage of the core runs)
//
// One node:http server on 127.0.0.1, one keep-alive fetch client. Rounds
// alternate so drift hits both alike; p50 of per-call wall time. Run:
// make bench-gateway (release build of the native module).

import { createServer } from "node:http";

import { createORPCClient } from "@orpc/client";
import { RPCLink } from "@orpc/client/fetch";
import { os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/node";
import * as z from "zod";

import { agentProcedure, createAgentGateway, createCapabilityRegistry } from "@orpc-agent/core";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CALLS_PER_ROUND = Number(process.env.BENCH_CALLS ?? 500);
const WARMUP = 1000;

const Input = z.object({ id: z.string().min(1), limit: z.number().int().max(50).default(10) });
const get = agentProcedure(os.$context())
  .meta({ agent: { description: "Get one order.", expose: { aiSdk: true }, sideEffect: "read", risk: "low" } })
  .input(Input)
  .handler(async ({ input }) => ({ id: input.id, limit: input.limit, status: "shipped" }));

const registry = await createCapabilityRegistry({ orders: { get } }, { approvalStore: "memory" });
const router = {
  orders: { get },
  agent: createAgentGateway(registry, { actor: (context) => context.user }),
};
const handler = new RPCHandler(router);
const server = createServer(async (req, res) => {
  const user = req.headers.authorization === "Bearer bench" ? { id: "bench", roles: [] } : undefined;
  await handler.handle(req, res, { prefix: "/rpc", context: { headers: req.headers, user } });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/rpc`;
const client = createORPCClient(new RPCLink({ url, headers: { authorization: "Bearer bench" } }));

const input = { id: "42", limit: 5 };
const plain = () => client.orders.get(input);
const governed = () => client.agent.invoke({ capability: "orders_get", input });

// Same answers before timing anything.
const a = await plain();
const b = await governed();
if (JSON.stringify(b) !== JSON.stringify({ status: "ok", output: a }))
  throw new Error(`different outputs: ${JSON.stringify([a, b])}`);

async function round(f, n, samples) {
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await f();
    samples?.push(Number(process.hrtime.bigint() - t) / 1000);
  }
}
await round(plain, WARMUP);
await round(governed, WARMUP);

const samples = { plain: [], gateway: [] };
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? ["plain", "gateway"] : ["gateway", "plain"];
  for (const which of order) await round(which === "plain" ? plain : governed, CALLS_PER_ROUND, samples[which]);
}
const p = (xs, q) => [...xs].sort((x, y) => x - y)[Math.floor(q * (xs.length - 1))];
const row = (name, xs) =>
  `${name.padEnd(8)} p50 ${p(xs, 0.5).toFixed(1).padStart(7)} µs   p90 ${p(xs, 0.9).toFixed(1).padStart(7)} µs   p99 ${p(xs, 0.99).toFixed(1).padStart(7)} µs`;
console.log(
  `gateway invoke vs plain oRPC over loopback HTTP (${ROUNDS} alternating rounds × ${CALLS_PER_ROUND} calls, node ${process.version})`,
);
console.log(row("plain", samples.plain));
console.log(row("gateway", samples.gateway));
console.log(
  `ratio (p50 gateway / p50 plain): ${(p(samples.gateway, 0.5) / p(samples.plain, 0.5)).toFixed(3)}  (target ≤ 1.2)`,
);

server.closeAllConnections();
server.close();
registry.close();
