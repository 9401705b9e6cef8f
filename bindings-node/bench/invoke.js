// registry.invoke vs a bare oRPC `call()` of the same procedure, side by
// side in one process (DESIGN §11): zod input, a trivial async handler,
// one middleware. Prints p50s (mitata), the ratio, and sequential
// throughput. Run with `make bench-node` (release native module).
import { call, os } from "@orpc/server";
import { measure } from "mitata";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry } from "@orpc-agent/core";

const base = agentProcedure(os.$context());
const withUser = os.middleware(async ({ next }) => next({ context: { user: "u1" } }));
const search = base
  .use(withUser)
  .meta({ agent: { description: "Search orders.", expose: { direct: true }, sideEffect: "read", risk: "low" } })
  .input(z.object({ query: z.string().min(2), limit: z.number().int().max(50).default(10) }))
  .handler(async ({ input, context }) => ({ n: input.limit, user: context.user }));

const registry = await createCapabilityRegistry({ orders: { search } });
const input = { query: "alice", limit: 5 };
const frame = { surface: "direct", context: {} };
const options = { context: {} };

// Same answers first: the comparison is meaningless otherwise.
const a = await call(search, input, options);
const b = await registry.invoke("orders.search", input, frame);
if (JSON.stringify(a) !== JSON.stringify(b.output)) throw new Error("outputs differ");

const bare = () => call(search, input, options);
const governed = () => registry.invoke("orders.search", input, frame);

async function throughput(fn, n) {
  for (let i = 0; i < 20_000; i++) await fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return n / s;
}

const rows = [];
for (let round = 0; round < 2; round++) {
  const sb = await measure(bare);
  const sg = await measure(governed);
  rows.push({ bare: sb.p50, governed: sg.p50 });
}
const best = (k) => Math.min(...rows.map((r) => r[k]));
const tb = await throughput(bare, 200_000);
const tg = await throughput(governed, 200_000);
const us = (ns) => (ns / 1000).toFixed(3);
console.log(`node ${process.version}, ${process.arch}`);
console.log(`bare call(procedure)          p50 ${us(best("bare"))} µs   ${Math.round(tb).toLocaleString("en")} calls/s sequential`);
console.log(`registry.invoke (direct)      p50 ${us(best("governed"))} µs   ${Math.round(tg).toLocaleString("en")} invocations/s sequential`);
console.log(`ratio governed / bare at p50: ${(best("governed") / best("bare")).toFixed(2)}x (target <= 1.2x); throughput target >= 450,000/s`);
if (registry.inFlight() !== 0) throw new Error("invocations leaked");
