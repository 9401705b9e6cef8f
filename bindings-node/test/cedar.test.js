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

// JSON.stringify writes a Map or Set as `{}`, a Date as its text, and
// leaves a function out: an actor's attributes would reach Cedar (and the
// audit record) as another value, and a `forbid` keyed on them would let
// the call through. Refused before anything runs, naming where, in the
// words Python refuses the same frame with.
test("an actor attribute JSON would write as another value is refused, never read by Cedar as {}", async () => {
  let runs = 0;
  const lookup = base
    .meta({
      agent: {
        description: "Looks up.",
        expose: { direct: true },
        sideEffect: "read",
        risk: "low",
        policies: [
          {
            name: "no-evil",
            cedar:
              'forbid (principal, action, resource) when { principal.attributes has org && principal.attributes.org has id && principal.attributes.org.id == "evil" };',
            actorAttributes: {
              type: "object",
              properties: { org: { type: "object", properties: { id: { type: "string" } } } },
            },
          },
        ],
      },
    })
    .input(z.object({}))
    .handler(async () => ({ runs: ++runs }));
  const registry = await createCapabilityRegistry({ orders: { lookup } });
  const call = (attributes) =>
    denial(registry.invoke("orders.lookup", {}, { surface: "direct", actor: { id: "ann", attributes } }));
  assert.equal(await call({ org: { id: "evil" } }), "POLICY_DENIED");
  const refusals = [
    [
      { org: new Map([["id", "evil"]]) },
      "input at /attributes/org is a Map, which the JSON data model has no place for",
    ],
    [{ org: new Set(["evil"]) }, "input at /attributes/org is a Set, which the JSON data model has no place for"],
    [
      { org: { id: "evil", since: new Date(0) } },
      "input at /attributes/org/since is a Date, which the JSON data model has no place for",
    ],
    [
      { org: { id: "evil", check: () => true } },
      "input at /attributes/org/check is a function, which the JSON data model has no place for",
    ],
    [
      { org: { id: "evil" }, tags: ["a", undefined] },
      "input at /attributes/tags/1 is an undefined, which the JSON data model has no place for",
    ],
    [
      { org: { id: "evil" }, tags: Object.assign(["a"], { toJSON: () => ["b"] }) },
      "input at /attributes/tags is an array with toJSON, which the JSON data model has no place for",
    ],
  ];
  for (const [attributes, message] of refusals) {
    await assert.rejects(
      registry.invoke("orders.lookup", {}, { surface: "direct", actor: { id: "ann", attributes } }),
      { code: "INVALID_INPUT", message, details: { reason: "NOT_JSON_VALUE" } },
    );
  }
  // An actor whose own toJSON JSON would write instead of the fields checked.
  const masked = { id: "ann", attributes: { org: { id: "good" } }, toJSON: () => ({ id: "ann" }) };
  await assert.rejects(registry.invoke("orders.lookup", {}, { surface: "direct", actor: masked }), {
    code: "INVALID_INPUT",
  });
  assert.equal(runs, 0);
  // What JSON holds as it is still runs, shared references included.
  assert.equal(await call({ org: { id: "good" }, tags: ["a"], note: null }), "ok");
  const shared = { leaf: 1 };
  assert.equal(await call({ org: { id: "good" }, tree: { a: shared, b: [shared, shared] } }), "ok");
});
