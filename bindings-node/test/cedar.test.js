// Cedar policies in Node (issue 21): what a policy reads is the validated
// input as the binding exports it, so zod's output side (defaults applied,
// transforms run) is what the core type-checks Cedar against and reads.
import assert from "node:assert/strict";
import { test } from "node:test";
import { os } from "@orpc/server";
import * as z from "zod";
import { agentProcedure, createCapabilityRegistry } from "@orpc-agent/core";

const base = agentProcedure(os.$context());
const meta = (cedar) => ({
  agent: {
    description: "Lists or refunds.",
    expose: { direct: true },
    sideEffect: "write",
    risk: "high",
    policies: [{ name: "rules", cedar }],
  },
});
const direct = { surface: "direct" };
const denial = (p) => p.then(() => "ok").catch((e) => e.code);

test("a field with a default is always there after validation: read without has", async () => {
  const list = base
    .meta(meta("forbid (principal, action, resource) when { context.input.limit > 50 };"))
    .input(z.object({ limit: z.number().int().default(10) }))
    .handler(async ({ input }) => input);
  const registry = await createCapabilityRegistry({ orders: { list } });
  assert.equal((await registry.invoke("orders.list", {}, direct)).status, "ok");
  assert.equal(await denial(registry.invoke("orders.list", { limit: 90 }, direct)), "POLICY_DENIED");
});

test("a transform's output cannot be described: read untyped, behind has", async () => {
  const cedar = (condition) => `forbid (principal, action, resource) when { ${condition} };`;
  const refund = (condition) =>
    base
      .meta(meta(cedar(condition)))
      .input(z.object({ amount: z.string().transform((s) => Number.parseInt(s, 10)) }))
      .handler(async ({ input }) => input);
  await assert.rejects(createCapabilityRegistry({ orders: { refund: refund("context.input.amount > 100") } }), (e) =>
    e.problems.some((p) => p.code === "INVALID_POLICY"),
  );
  const registry = await createCapabilityRegistry({
    orders: { refund: refund("context.input has amount && context.input.amount > 100") },
  });
  // The policy sees the number the transform made, not the string sent.
  assert.equal(await denial(registry.invoke("orders.refund", { amount: "500" }, direct)), "POLICY_DENIED");
  assert.equal((await registry.invoke("orders.refund", { amount: "50" }, direct)).status, "ok");
});
