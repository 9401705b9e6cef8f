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

async function batch(fn, n) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn();
  return Number(process.hrtime.bigint() - t0) / n; // ns per call
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Warm up both paths, then interleave: the machine is shared, so each
// round measures both side by side and the per-round ratio is what counts.
await batch(bare, 50_000);
await batch(governed, 50_000);
const rounds = [];
for (let round = 0; round < 41; round++) {
  const b = await batch(bare, 5_000);
  const g = await batch(governed, 5_000);
  rounds.push({ b, g, ratio: g / b });
}
const p50 = [];
for (let round = 0; round < 3; round++) {
  p50.push({ bare: (await measure(bare)).p50, governed: (await measure(governed)).p50 });
}
const us = (ns) => (ns / 1000).toFixed(3);
const mb = median(rounds.map((r) => r.b));
const mg = median(rounds.map((r) => r.g));
const mp = (k) => median(p50.map((r) => r[k]));
console.log(`node ${process.version}, ${process.arch}; 41 interleaved rounds of 5 000 sequential calls each, + mitata p50 x3`);
console.log(`bare call(procedure, input, {context})  mitata p50 ${us(mp("bare"))} µs   sequential mean ${us(mb)} µs = ${Math.round(1e9 / mb).toLocaleString("en")} calls/s`);
console.log(`registry.invoke on surface direct      mitata p50 ${us(mp("governed"))} µs   sequential mean ${us(mg)} µs = ${Math.round(1e9 / mg).toLocaleString("en")} invocations/s`);
console.log(`ratio governed / bare: mitata p50 ${(mp("governed") / mp("bare")).toFixed(2)}x; median of per-round ratios ${median(rounds.map((r) => r.ratio)).toFixed(2)}x (target <= 1.2x)`);
if (registry.inFlight() !== 0) throw new Error("invocations leaked");
