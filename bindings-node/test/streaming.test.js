// Streaming handlers (issue 20.2): a procedure whose handler is an oRPC
// event iterator (`async function*`). Each yielded value is a progress
// report; the output (the returned value, else the last yielded) is
// validated, redacted and audited like any output; the deadline and the
// caller's abort stop the generator. Driven through invoke and a real MCP
// client (progress notifications).
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { eventIterator, os } from "@orpc/server";
import * as z from "zod";
import { agentProcedure, createCapabilityRegistry, registerMcpTools } from "@orpc-agent/core";

/** Waits until `done()` holds, polling; fails after 10 s rather than hang. */
async function until(done, what) {
  const give = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > give) assert.fail(`${what} did not happen within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const base = agentProcedure(os.$context());
const meta = (extra = {}) => ({
  agent: { description: "Counts.", expose: { direct: true, mcp: true }, sideEffect: "read", risk: "low", ...extra },
});
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Where each generator got to: yields made and whether its `finally` ran. */
function tracker() {
  const t = { yields: 0, stopped: false };
  t.entered = new Promise((resolve) => (t.enter = resolve));
  return t;
}

async function registryOf(seen, records) {
  const count = base
    .meta(meta({ redact: { output: (o) => ({ ...o, secret: "[redacted]" }) } }))
    .input(z.object({ n: z.number() }))
    .output(eventIterator(z.object({ i: z.number() }), z.object({ total: z.number(), secret: z.string() })))
    .handler(async function* ({ input }) {
      for (let i = 1; i <= input.n; i++) {
        await nextTurn();
        yield { i };
      }
      return { total: input.n, secret: "s3cr3t" };
    });
  const lastYield = base
    .meta(meta())
    .input(z.object({ n: z.number() }))
    .output(eventIterator(z.object({ i: z.number() })))
    .handler(async function* ({ input }) {
      for (let i = 1; i <= input.n; i++) yield { i };
    });
  const badReturn = base
    .meta(meta())
    .input(z.object({}))
    .output(eventIterator(z.object({ i: z.number() }), z.object({ total: z.number() })))
    .handler(async function* () {
      yield { i: 1 };
      return { total: "many" };
    });
  const fails = base
    .meta(meta())
    .input(z.object({}))
    .handler(async function* () {
      yield 1;
      throw new Error("card 4111 1111 1111 1111 declined");
    });
  const endless = (t) =>
    async function* ({ signal }) {
      try {
        t.enter();
        for (;;) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          if (signal.aborted) return;
          t.yields += 1;
          yield t.yields;
        }
      } finally {
        t.stopped = true;
      }
    };
  seen.slow = tracker();
  seen.cancelled = tracker();
  // Deadlines long enough that a loaded machine starts the generator before
  // them (the core never starts a handler at its deadline).
  const slow = base
    .meta(meta({ timeoutMs: 400 }))
    .input(z.object({}))
    .handler(endless(seen.slow));
  const cancelled = base.meta(meta()).input(z.object({})).handler(endless(seen.cancelled));
  return createCapabilityRegistry(
    { s: { count, lastYield, badReturn, fails, slow, cancelled } },
    { audit: (r) => records.push(r), logger: false },
  );
}

const seen = {};
const records = [];
const registry = await registryOf(seen, records);
const finished = (id) => records.filter((r) => r.event === "finished" && r.capabilityId === id).map((r) => r.outcome);

test("each yield is a progress report; the returned value is the output, validated and redacted", async () => {
  const events = [];
  const out = await registry.invoke("s.count", { n: 3 }, { surface: "direct", onProgress: (e) => events.push(e) });
  assert.deepEqual(out, { status: "ok", output: { total: 3, secret: "[redacted]" } });
  assert.deepEqual(events, [{ done: 1 }, { done: 2 }, { done: 3 }]);
  assert.deepEqual(finished("s.count"), ["ok"]);
});

test("a generator that returns nothing has its last yielded value as the output", async () => {
  const out = await registry.invoke("s.lastYield", { n: 2 }, { surface: "direct" });
  assert.deepEqual(out, { status: "ok", output: { i: 2 } });
});

test("the descriptor's output schema is the streamed output's (returns, else yields)", () => {
  const byId = Object.fromEntries(registry.descriptors({ surface: "direct" }).map((d) => [d.id, d.outputSchema]));
  assert.deepEqual(Object.keys(byId["s.count"].properties).sort(), ["secret", "total"]);
  assert.deepEqual(Object.keys(byId["s.lastYield"].properties), ["i"]);
});

test("a returned value that fails the schema is OUTPUT_INVALID; a throw mid-stream is EXECUTION_FAILED, its text not shown", async () => {
  await assert.rejects(registry.invoke("s.badReturn", {}, { surface: "direct" }), { code: "OUTPUT_INVALID" });
  await assert.rejects(registry.invoke("s.fails", {}, { surface: "direct" }), (e) => {
    assert.equal(e.code, "EXECUTION_FAILED");
    assert.doesNotMatch(e.message, /4111/);
    return true;
  });
  assert.deepEqual(finished("s.badReturn"), ["OUTPUT_INVALID"]);
  assert.deepEqual(finished("s.fails"), ["EXECUTION_FAILED"]);
});

test("the deadline ends the call TIMEOUT and stops the generator", async () => {
  await assert.rejects(registry.invoke("s.slow", {}, { surface: "direct" }), { code: "TIMEOUT" });
  // The generator stops at its next await or yield: wait for its finally, not for a time.
  await until(() => seen.slow.stopped, "the generator's finally");
  const after = seen.slow.yields;
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(seen.slow.yields, after, "no value is made after the stop");
  assert.deepEqual(finished("s.slow"), ["TIMEOUT"]);
});

test("the caller's abort ends the call CANCELLED and stops the generator", async () => {
  const controller = new AbortController();
  const call = registry.invoke("s.cancelled", {}, { surface: "direct", signal: controller.signal });
  await seen.cancelled.entered;
  controller.abort();
  await assert.rejects(call, { code: "CANCELLED" });
  while (!seen.cancelled.stopped) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual(finished("s.cancelled"), ["CANCELLED"]);
});

test("a real MCP client that sent a progressToken gets one notification per yield, then the output", async () => {
  const server = new McpServer({ name: "streaming", version: "1.0.0" });
  registerMcpTools(server, registry, { frame: () => ({ actor: { id: "agent" } }) });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  const received = [];
  const result = await client.callTool({ name: "s_count", arguments: { n: 3 } }, undefined, {
    onprogress: (p) => received.push(p.progress),
  });
  assert.equal(result.isError, false);
  assert.deepEqual(JSON.parse(result.content[0].text), { total: 3, secret: "[redacted]" });
  assert.deepEqual(received, [1, 2, 3]);
  await client.close();
});

test("the same procedure still streams to oRPC's own callers", async () => {
  const { call } = await import("@orpc/server");
  const proc = base
    .meta(meta())
    .input(z.object({ n: z.number() }))
    .handler(async function* ({ input }) {
      for (let i = 1; i <= input.n; i++) yield i;
      return "done";
    });
  const got = [];
  const it = await call(proc, { n: 2 });
  for (;;) {
    const step = await it.next();
    if (step.done) {
      got.push(step.value);
      break;
    }
    got.push(step.value);
  }
  assert.deepEqual(got, [1, 2, "done"]);
});

test("an iterator handed over after the deadline never starts; one that ignores its signal stops at its next yield", async () => {
  const late = { started: false };
  const handedOver = new Promise((resolve) => (late.handedOver = resolve));
  const stubborn = { yields: 0, stopped: false };
  const slowMiddleware = base.use(async ({ next }) => {
    await new Promise((resolve) => setTimeout(resolve, 80)); // past the 20 ms deadline
    const out = await next();
    late.handedOver();
    return out;
  });
  const reg = await createCapabilityRegistry(
    {
      late: slowMiddleware
        .meta(meta({ timeoutMs: 20 }))
        .input(z.object({}))
        .handler(async function* () {
          late.started = true;
          yield 1;
        }),
      stubborn: base
        .meta(meta({ timeoutMs: 400 }))
        .input(z.object({}))
        .handler(async function* () {
          try {
            for (;;) {
              await new Promise((resolve) => setTimeout(resolve, 5)); // never reads its signal
              stubborn.yields += 1;
              yield stubborn.yields;
            }
          } finally {
            stubborn.stopped = true;
          }
        }),
    },
    { logger: false },
  );
  await assert.rejects(reg.invoke("late", {}, { surface: "direct" }), { code: "TIMEOUT" });
  // Wait until the middleware handed the iterator over, then one turn for the driver to take it.
  await handedOver;
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(late.started, false, "the generator's body never ran");

  await assert.rejects(reg.invoke("stubborn", {}, { surface: "direct" }), { code: "TIMEOUT" });
  await until(() => stubborn.stopped, "the stubborn generator's finally");
  const made = stubborn.yields;
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(stubborn.yields, made, "stopped by return() at its next yield");
  reg.close();
});
