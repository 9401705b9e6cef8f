// oRPC integration with the real packages: nested and lazy routers,
// procedures without `agent` meta, the procedure's own middlewares and
// handler with the frame's context, zod 4 and a plain Standard Schema
// validator, JSON Schemas in descriptors, and the same router still serving
// ordinary oRPC traffic through `RPCHandler` (fetch) with a real `Request`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createORPCClient } from "@orpc/client";
import { RPCLink } from "@orpc/client/fetch";
import { call, lazy, os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/fetch";
import * as z from "zod";

import { agentProcedure, CapabilityError, createCapabilityRegistry } from "@orpc-agent/core";

const base = agentProcedure(os.$context());
const seen = [];
const auth = os.middleware(async ({ context, next }) => {
  seen.push(["auth", context.tenant]);
  if (!context.tenant) throw new Error("no tenant");
  return next({ context: { user: `${context.tenant}:user` } });
});

const search = base
  .use(auth)
  .meta({
    agent: {
      description: "Search orders.",
      expose: { direct: true, mcp: true },
      sideEffect: "read",
      risk: "low",
      tags: ["orders"],
    },
  })
  .input(z.object({ query: z.string().min(2), limit: z.number().int().max(50).default(10) }))
  .output(z.object({ hits: z.array(z.string()), user: z.string() }))
  .handler(async ({ input, context, signal }) => {
    assert.ok(signal instanceof AbortSignal);
    return { hits: [`${input.query}#${input.limit}`], user: context.user };
  });

const evenOnly = {
  "~standard": {
    version: 1,
    vendor: "plain",
    validate: (v) =>
      typeof v?.n === "number" && v.n % 2 === 0
        ? { value: { n: v.n } }
        : { issues: [{ message: "n must be even", path: ["n"] }] },
  },
};
const half = base
  .meta({ agent: { description: "Halve an even number.", expose: { direct: true }, sideEffect: "none", risk: "low" } })
  .input(evenOnly)
  .handler(async ({ input }) => input.n / 2);

const internal = os.input(z.object({ x: z.number() })).handler(async ({ input }) => input.x + 1); // no agent meta

const router = {
  orders: { search, internal },
  math: lazy(async () => ({ default: { half, deep: lazy(async () => ({ default: { half } })) } })),
};

test("nested and lazy routers: ids are router paths; procedures without agent meta are left out", async () => {
  const registry = await createCapabilityRegistry(router);
  const ids = registry.inspect().capabilities.map((c) => c.id);
  assert.deepEqual(ids, ["orders.search", "math.half", "math.deep.half"]);
});

test("the procedure's middlewares and handler run with the frame's context; validation once", async () => {
  const registry = await createCapabilityRegistry(router);
  seen.length = 0;
  const r = await registry.invoke("orders.search", { query: "ab" }, { surface: "direct", context: { tenant: "t1" } });
  assert.deepEqual(r, { status: "ok", output: { hits: ["ab#10"], user: "t1:user" } });
  assert.deepEqual(seen, [["auth", "t1"]]);
  // A middleware that throws fails the call like a handler (no message leaks).
  await assert.rejects(
    registry.invoke("orders.search", { query: "ab" }, { surface: "direct", context: {} }),
    (e) => e instanceof CapabilityError && e.code === "EXECUTION_FAILED" && !e.message.includes("tenant"),
  );
  // zod input errors are INVALID_INPUT with the validator's message, in
  // the core's words: where (a JSON pointer) and what.
  await assert.rejects(
    registry.invoke("orders.search", { query: "a" }, { surface: "direct", context: { tenant: "t1" } }),
    (e) => e.code === "INVALID_INPUT" && /^The input is invalid: \/query: .+\.$/.test(e.message),
  );
  // Output schema (stage 12) on the tool name path.
  const viaTool = await registry.invoke(
    "orders_search",
    { query: "xyz", limit: 2 },
    { surface: "mcp", context: { tenant: "t2" } },
  );
  assert.deepEqual(viaTool.output, { hits: ["xyz#2"], user: "t2:user" });
});

test("middlewares and handlers get the options oRPC's own call() gives them", async () => {
  const shapes = [];
  const describe = (where, o) =>
    shapes.push([
      where,
      o.input,
      o.context.tenant,
      [...o.path],
      typeof o.errors,
      o.procedure !== undefined,
      o.lastEventId,
    ]);
  const extras = [];
  const look = os.middleware(async (options) => {
    describe("middleware", options);
    extras.push([options.signal instanceof AbortSignal, typeof options.progress]);
    const { next } = options; // detached, as middlewares usually take it
    return next({ context: { extra: 1 } });
  });
  const probe = base
    .use(look)
    .meta({ agent: { description: "Probe.", expose: { direct: true }, sideEffect: "none", risk: "low" } })
    .input(z.object({ q: z.string() }))
    .handler(async (options) => {
      describe("handler", options);
      extras.push([options.signal instanceof AbortSignal, typeof options.progress]);
      return options.context.extra;
    });
  const registry = await createCapabilityRegistry({ probe: { it: probe } });
  const governed = await registry.invoke("probe.it", { q: "x" }, { surface: "direct", context: { tenant: "t" } });
  const viaGovernance = shapes.splice(0);
  const bare = await call(probe, { q: "x" }, { context: { tenant: "t" }, path: ["probe", "it"] });
  assert.equal(governed.output, 1);
  assert.equal(bare, 1);
  assert.deepEqual(viaGovernance, shapes);
  assert.equal(viaGovernance.length, 2);
  // Beyond oRPC's: a signal always (the deadline's), and progress reporting.
  assert.deepEqual(extras.slice(0, 2), [
    [true, "function"],
    [true, "function"],
  ]);
});

test("middlewares combined with oRPC's concat(): they run, and the handler keeps signal and progress", async () => {
  const seen = [];
  const first = os.middleware(async ({ next }) => next({ context: { a: 1 } }));
  const second = os.middleware(async (options) => {
    // A spread by oRPC's concat(): no signal, as in call() without one.
    seen.push(["middleware", options.context.a, options.signal]);
    return options.next({ context: { b: 2 } });
  });
  const probe = base
    .use(first.concat(second))
    .meta({ agent: { description: "Probe.", expose: { direct: true }, sideEffect: "none", risk: "low" } })
    .handler(async ({ context, signal, progress }) => {
      seen.push(["handler", context.a + context.b, signal instanceof AbortSignal, typeof progress]);
      return "ok";
    });
  const registry = await createCapabilityRegistry({ probe });
  assert.deepEqual(await registry.invoke("probe", {}, { surface: "direct" }), { status: "ok", output: "ok" });
  const bare = [];
  for (const x of seen.splice(0)) bare.push(x);
  assert.deepEqual(bare, [
    ["middleware", 1, undefined],
    ["handler", 3, true, "function"],
  ]);
});

test("any Standard Schema validator works at stage 4", async () => {
  const registry = await createCapabilityRegistry(router);
  assert.deepEqual(await registry.invoke("math.half", { n: 8 }, { surface: "direct" }), { status: "ok", output: 4 });
  await assert.rejects(
    registry.invoke("math.deep.half", { n: 3 }, { surface: "direct" }),
    (e) => e.code === "INVALID_INPUT" && /even/.test(e.message),
  );
});

test("descriptors carry JSON Schemas from zod 4 (Standard JSON Schema)", async () => {
  const registry = await createCapabilityRegistry(router);
  const [d] = registry.descriptors({ surface: "mcp" });
  assert.equal(d.id, "orders.search");
  assert.equal(d.inputSchema.type, "object");
  assert.deepEqual(d.inputSchema.required, ["query"]);
  assert.equal(d.outputSchema.properties.user.type, "string");
  assert.equal(d.annotations.readOnlyHint, true);
  assert.deepEqual(registry.descriptors({ surface: "aiSdk" }), []);
});

test("the same router keeps serving ordinary oRPC traffic (RPCHandler + real Request, and call())", async () => {
  await createCapabilityRegistry(router); // building a registry changes nothing in the router
  const handler = new RPCHandler(router);
  const client = createORPCClient(
    new RPCLink({
      url: "http://127.0.0.1/rpc",
      fetch: async (request) => {
        const { matched, response } = await handler.handle(request, { prefix: "/rpc", context: { tenant: "http" } });
        assert.ok(matched);
        return response;
      },
    }),
  );
  assert.deepEqual(await client.orders.search({ query: "hello" }), { hits: ["hello#10"], user: "http:user" });
  assert.equal(await client.orders.internal({ x: 1 }), 2); // not a capability, still served
  assert.equal(await client.math.half({ n: 4 }), 2); // lazy
  // Exposure governs only the agent path: oRPC serves what `expose` hides.
  assert.equal(await call(half, { n: 10 }), 5);
});
