// A governed call with a 20-policy Cedar set vs the same call with one
// declarative predicate (issue 21), side by side in one process: the zod
// procedure of invoke.js, registry.invoke on surface direct, interleaved
// rounds, p50s and their ratio. Run with `make bench-node` (release native
// module). The core-only comparison is `cargo bench --bench cedar`.
import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry } from "@orpc-agent/core";

/** The twenty policies of core/benches/cedar.rs. */
function cedarSet(capability) {
  const out = [];
  for (let i = 0; i < 20; i++) {
    const kinds = [
      `@id("roles-${i}") permit (principal, action in Action::"invoke", resource == Capability::"${capability}") when { principal.roles.contains("role-${i}") };`,
      `@id("limit-${i}") @requireApproval("ops") permit (principal, action, resource) when { context.input has limit && context.input.limit > ${1000 + i} };`,
      `@id("surface-${i}") @reason("no") forbid (principal, action == Action::"workflow", resource) when { resource.tags.contains("tag-${i}") };`,
      `@id("region-${i}") @reason("no") forbid (principal, action, resource) when { context.input has region && context.input.region == "r-${i}" } unless { principal.roles.contains("admin") };`,
      `@id("risk-${i}") @reason("no") forbid (principal, action, resource) when { resource.risk == "critical" && principal.anonymous };`,
    ];
    out.push(kinds[i % 5]);
  }
  return out.join("\n");
}

const procedure = (policies) =>
  agentProcedure(os.$context())
    .meta({
      agent: {
        description: "Search orders.",
        expose: { direct: true },
        sideEffect: "read",
        risk: "low",
        tags: ["orders"],
        policies,
      },
    })
    .input(z.object({ query: z.string().min(2), limit: z.number().int().max(5000).default(10), region: z.string() }))
    .handler(async ({ input }) => ({ n: input.limit }));

const declarative = await createCapabilityRegistry({
  orders: { search: procedure([{ name: "big", when: { input: ["/limit > 1000"] }, decision: "requireApproval" }]) },
});
const cedar = await createCapabilityRegistry({
  orders: { search: procedure([{ name: "rules", cedar: cedarSet("orders.search") }]) },
});
const input = { query: "alice", limit: 5, region: "eu" };
const frame = { surface: "direct", context: {}, actor: { id: "ann", roles: ["role-5", "support"] } };

const a = await declarative.invoke("orders.search", input, frame);
const b = await cedar.invoke("orders.search", input, frame);
if (a.status !== "ok" || b.status !== "ok" || JSON.stringify(a.output) !== JSON.stringify(b.output)) {
  throw new Error(`outcomes differ: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
}

async function batch(fn, n) {
  const each = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    each[i] = Number(process.hrtime.bigint() - t);
  }
  return each;
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const one = () => declarative.invoke("orders.search", input, frame);
const set = () => cedar.invoke("orders.search", input, frame);

await batch(one, 20_000);
await batch(set, 20_000);
const all = { one: [], set: [] };
for (let round = 0; round < 21; round++) {
  all.one.push(...(await batch(one, 2_000)));
  all.set.push(...(await batch(set, 2_000)));
}
const us = (ns) => (ns / 1000).toFixed(2);
const p50one = median(all.one);
const p50set = median(all.set);
console.log(`node ${process.version}, ${process.arch}; 21 interleaved rounds x 2000 awaited calls per side`);
console.log(`registry.invoke, 1 declarative predicate  p50 ${us(p50one)} µs`);
console.log(`registry.invoke, 20-policy Cedar set      p50 ${us(p50set)} µs`);
console.log(`ratio at p50: ${(p50set / p50one).toFixed(2)}x (target <= 1.5x)`);
if (declarative.inFlight() !== 0 || cedar.inFlight() !== 0) throw new Error("invocations leaked");
