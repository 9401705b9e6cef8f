// Concurrency, failing handlers, cancellation, a throwing redactor,
// approvals over SQLite across a registry re-creation, panics, error-code
// drift, and the CommonJS entry point.
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { getEventListeners } from "node:events";
import { os } from "@orpc/server";
import * as z from "zod";

import * as native from "@orpc-agent/core/native";
import { agentProcedure, CapabilityError, createCapabilityRegistry, ERROR_CODES } from "@orpc-agent/core";

const base = agentProcedure(os.$context());
const agent = (extra = {}) => ({
  description: "Does a thing.",
  expose: { direct: true },
  sideEffect: "read",
  risk: "low",
  ...extra,
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("1 000 concurrent invocations: no cross-talk between contexts, inputs or outputs", async () => {
  const registry = await createCapabilityRegistry({
    add: base
      .meta({ agent: agent() })
      .use(async ({ context, next }) => next({ context: { seenBy: context.caller } }))
      .input(z.object({ n: z.number() }))
      .handler(async ({ input, context }) => {
        await sleep(Math.floor(Math.random() * 5));
        return { caller: context.caller, seenBy: context.seenBy, n: input.n };
      }),
  });
  const results = await Promise.all(
    Array.from({ length: 1000 }, (_, i) =>
      registry.invoke("add", { n: i }, { surface: "direct", context: { caller: `c${i}` }, actor: { id: `a${i}` } }),
    ),
  );
  for (const [i, r] of results.entries()) assert.deepEqual(r.output, { caller: `c${i}`, seenBy: `c${i}`, n: i });
  assert.equal(registry.inFlight(), 0);
});

test("handlers that throw, reject, or hang past the deadline ignoring the signal", async () => {
  const registry = await createCapabilityRegistry({
    throwsSync: base.meta({ agent: agent() }).handler(() => {
      throw new Error("sync secret");
    }),
    rejects: base.meta({ agent: agent() }).handler(async () => {
      throw new TypeError("async secret");
    }),
    rejectsValue: base.meta({ agent: agent() }).handler(() => Promise.reject("a string secret")),
    hangs: base.meta({ agent: agent({ timeoutMs: 25 }) }).handler(() => new Promise(() => {})),
  });
  for (const id of ["throwsSync", "rejects", "rejectsValue"]) {
    const e = await registry.invoke(id, {}, { surface: "direct" }).catch((x) => x);
    assert.ok(e instanceof CapabilityError, id);
    assert.equal(e.code, "EXECUTION_FAILED", id);
    assert.equal(e.kind, "std:internal");
    assert.ok(!e.message.includes("secret"), id);
  }
  const t0 = Date.now();
  const e = await registry.invoke("hangs", {}, { surface: "direct" }).catch((x) => x);
  assert.equal(e.code, "TIMEOUT");
  assert.equal(e.retryable, true);
  assert.ok(Date.now() - t0 >= 20, "returned at the deadline, not at once"); // libuv timers may fire a millisecond or two before Date.now() says
  assert.equal(registry.inFlight(), 0);
});

test("a CapabilityError with fields the core cannot hold is refused where it is made, and one changed afterwards is a plain failure: EXECUTION_FAILED, audited", async () => {
  assert.throws(() => new CapabilityError("NOT_FOUND", "x", { retryable: 1 }), TypeError);
  assert.throws(() => new CapabilityError("NOT_FOUND", 42), TypeError);
  const audit = [];
  const logged = [];
  const registry = await createCapabilityRegistry(
    {
      built: base.meta({ agent: agent() }).handler(() => {
        throw new CapabilityError("EXECUTION_FAILED", "x", { retryable: "yes" });
      }),
      changed: base.meta({ agent: agent() }).handler(async () => {
        const e = new CapabilityError("NOT_FOUND", "No order o-9.");
        e.retryable = 1;
        throw e;
      }),
    },
    { audit: (r) => audit.push(r), logger: { warn: (...args) => logged.push(args) } },
  );
  for (const id of ["built", "changed"]) {
    const e = await registry.invoke(id, {}, { surface: "direct" }).catch((x) => x);
    assert.ok(e instanceof CapabilityError, id);
    assert.equal(e.code, "EXECUTION_FAILED", id);
  }
  assert.deepEqual(
    audit.filter((r) => r.event === "finished").map((r) => [r.capabilityId, r.outcome]),
    [
      ["built", "EXECUTION_FAILED"],
      ["changed", "EXECUTION_FAILED"],
    ],
  );
  assert.equal(logged.length, 2, "the operator is told of both");
  assert.equal(registry.inFlight(), 0);
});

test("a validator that throws rejects the input without echoing it", async () => {
  const throwing = {
    "~standard": {
      version: 1,
      vendor: "t",
      validate: (v) => {
        throw new Error(`bad ${v.secret}`);
      },
    },
  };
  const registry = await createCapabilityRegistry({
    v: base
      .meta({ agent: agent() })
      .input(throwing)
      .handler(async () => 1),
  });
  const e = await registry.invoke("v", { secret: "PIN-1234" }, { surface: "direct" }).catch((x) => x);
  assert.equal(e.code, "INVALID_INPUT");
  assert.ok(!JSON.stringify(e.toJSON()).includes("PIN-1234"));
});

test("the frame's AbortSignal cancels: CANCELLED, and the handler's signal aborts", async () => {
  let handlerSignal;
  const registry = await createCapabilityRegistry({
    wait: base.meta({ agent: agent() }).handler(({ signal }) => {
      handlerSignal = signal;
      return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    }),
  });
  const ac = new AbortController();
  const p = registry.invoke("wait", {}, { surface: "direct", signal: ac.signal });
  setTimeout(() => ac.abort(), 5);
  assert.equal((await p.catch((x) => x)).code, "CANCELLED");
  assert.equal(handlerSignal.aborted, true);
  const pre = new AbortController();
  pre.abort();
  assert.equal(
    (await registry.invoke("wait", {}, { surface: "direct", signal: pre.signal }).catch((x) => x)).code,
    "CANCELLED",
  );
});

test("the caller's abort cancels a handler that never reads its signal, in the same turn or later", async () => {
  let runs = 0;
  const registry = await createCapabilityRegistry({
    quick: base.meta({ agent: agent() }).handler(async () => ++runs),
    deaf: base.meta({ agent: agent() }).handler(() => new Promise(() => {})),
  });
  // Aborted synchronously after the call started: the handler settles
  // within the turn, and the answer is still CANCELLED, not its output.
  const same = new AbortController();
  const p = registry.invoke("quick", {}, { surface: "direct", signal: same.signal });
  same.abort();
  assert.equal((await p.catch((x) => x)).code, "CANCELLED");
  assert.equal(runs, 1);
  // Aborted a few turns later, while a handler that ignores its signal hangs.
  const later = new AbortController();
  const q = registry.invoke("deaf", {}, { surface: "direct", signal: later.signal });
  await new Promise((r) => setTimeout(r, 5));
  later.abort();
  assert.equal((await q.catch((x) => x)).code, "CANCELLED");
  assert.equal(registry.inFlight(), 0);
  // Not aborted: the output, with no listener left on the caller's signal.
  const never = new AbortController();
  assert.deepEqual(await registry.invoke("quick", {}, { surface: "direct", signal: never.signal }), {
    status: "ok",
    output: 2,
  });
  const hung = registry.invoke("deaf", {}, { surface: "direct", signal: never.signal });
  await new Promise((r) => setImmediate(r));
  assert.equal(getEventListeners(never.signal, "abort").length, 1, "listening once the handler outlived its turn");
  never.abort();
  assert.equal((await hung.catch((x) => x)).code, "CANCELLED");
  assert.equal(getEventListeners(never.signal, "abort").length, 0, "no listener left");
});

test("an abort that comes before a deadline that passes in the same turn is CANCELLED, not TIMEOUT", async () => {
  const registry = await createCapabilityRegistry({
    hang: base.meta({ agent: agent({ timeoutMs: 1 }) }).handler(() => new Promise(() => {})),
  });
  const ac = new AbortController();
  const p = registry.invoke("hang", {}, { surface: "direct", signal: ac.signal });
  ac.abort();
  const until = Date.now() + 5;
  while (Date.now() < until); // the deadline passes before the loop turns
  assert.equal((await p.catch((x) => x)).code, "CANCELLED");
});

test("an input with a NaN or infinity is INVALID_INPUT NON_FINITE_NUMBER before any validator or handler (as in Python and Swift), after exposure and the limits", async () => {
  let runs = 0;
  const registry = await createCapabilityRegistry({
    raw: base.meta({ agent: agent() }).handler(async () => ++runs),
    hidden: base.meta({ agent: agent({ expose: { mcp: true } }) }).handler(async () => ++runs),
  });
  const direct = { surface: "direct" };
  const e = await registry.invoke("raw", { ok: 1, x: { y: [0, Number.NaN] } }, direct).catch((x) => x);
  assert.deepEqual(
    [e.code, e.details, e.message.includes("/x/y/1")],
    ["INVALID_INPUT", { reason: "NON_FINITE_NUMBER" }, true],
  );
  const boxed = await registry.invoke("raw", { n: new Number(Number.POSITIVE_INFINITY) }, direct).catch((x) => x);
  assert.equal(boxed.details?.reason, "NON_FINITE_NUMBER");
  const hidden = await registry.invoke("hidden", { n: Number.NaN }, direct).catch((x) => x);
  assert.equal(hidden.code, "NOT_FOUND", "exposure first (SI-8)");
  const big = await registry.invoke("raw", { n: Number.NaN, v: "x".repeat(2_000_000) }, direct).catch((x) => x);
  assert.equal(big.code, "LIMIT_EXCEEDED", "the limits first");
  assert.equal((await registry.invoke("raw", { s: "null", n: null }, direct)).status, "ok");
  assert.equal(runs, 1);
});

test("inputs nested deeper than JSON.stringify can go are LIMIT_EXCEEDED, not unmeasured", async () => {
  let runs = 0;
  const registry = await createCapabilityRegistry({ raw: base.meta({ agent: agent() }).handler(async () => ++runs) });
  const deep = JSON.parse("[".repeat(200_000) + "]".repeat(200_000));
  const e = await registry.invoke("raw", deep, { surface: "direct" }).catch((x) => x);
  assert.equal(e.code, "LIMIT_EXCEEDED");
  assert.equal(e.details.limit, "depth");
  assert.equal(runs, 0);
});

test("an actor crosses as an id alone or as JSON, and the core records the same actor", async () => {
  const registry = await createCapabilityRegistry(
    {
      who: base.meta({ agent: agent({ sideEffect: "write", approval: { required: true } }) }).handler(async () => "ok"),
    },
    { policies: [{ name: "no-blocked", when: { actorRole: ["blocked"] }, decision: "deny" }] },
  );
  const recorded = [];
  for (const actor of [
    { id: "u-1" },
    { id: "u-2", roles: [] },
    { id: "u-3", roles: ["ops"] },
    { id: "u-4", attributes: { team: "a" } },
  ]) {
    const r = await registry.invoke("who", {}, { surface: "direct", actor });
    assert.equal(r.status, "approval_required", JSON.stringify(actor));
    recorded.push(r.request.actor);
  }
  assert.deepEqual(recorded, [
    { id: "u-1", roles: [], attributes: {} },
    { id: "u-2", roles: [], attributes: {} },
    { id: "u-3", roles: ["ops"], attributes: {} },
    { id: "u-4", roles: [], attributes: { team: "a" } },
  ]);
  const denied = await registry
    .invoke("who", {}, { surface: "direct", actor: { id: "u-5", roles: ["blocked"] } })
    .catch((x) => x);
  assert.equal(denied.code, "POLICY_DENIED");
  const badId = await registry.invoke("who", {}, { surface: "direct", actor: { id: 7 } }).catch((x) => x);
  assert.equal(badId.code, "INVALID_INPUT");
  // An adapter shows this message to the model: it names types, never the
  // frame's values (an app's factory may put an email where the actor goes).
  for (const frame of [
    { surface: "direct", actor: "alice@example.com" },
    { surface: "direct", actor: { id: "u-1", roles: "alice@example.com" } },
    { surface: "direct", requestId: 4111111111111111 },
  ]) {
    const bad = await registry.invoke("who", {}, frame).catch((x) => x);
    assert.equal(bad.code, "INVALID_INPUT");
    assert.ok(!bad.message.includes("alice") && !bad.message.includes("4111"), bad.message);
  }
});

test("a redactor that throws: EXECUTION_FAILED and the secret appears nowhere", async () => {
  const records = [];
  const registry = await createCapabilityRegistry(
    {
      leak: base
        .meta({
          agent: agent({
            redact: {
              output: (o) => {
                throw new Error(`cannot redact ${o.secret}`);
              },
            },
          }),
        })
        .handler(async () => ({ secret: "TOPSECRET-42" })),
    },
    { audit: { subscriber: (r) => records.push(r), payloads: true } },
  );
  const e = await registry.invoke("leak", {}, { surface: "direct" }).catch((x) => x);
  assert.equal(e.code, "EXECUTION_FAILED");
  const all = JSON.stringify({ e: e.toJSON(), m: e.message, d: e.details, records, stack: e.stack });
  assert.ok(!all.includes("TOPSECRET-42"));
  assert.equal(records.at(-1).outcome, "EXECUTION_FAILED");
  assert.equal(records.at(-1).stage, 13);
});

test("approvals round trip over SQLite, across a registry re-creation", async () => {
  const path = join(tmpdir(), `orpc-agent-node-${process.pid}-${Date.now()}.db`);
  const router = {
    refunds: {
      create: base
        .meta({
          agent: agent({
            expose: { mcp: true },
            sideEffect: "write",
            approval: { required: true, type: "manager" },
            redact: { approvalInput: (input, info) => ({ ...input, card: "****", shownTo: info.surface }) },
          }),
        })
        .input(z.object({ order: z.string(), card: z.string() }))
        .handler(async ({ input, context }) => ({ refunded: input.order, by: context.clerk })),
    },
  };
  try {
    const first = await createCapabilityRegistry(router, { approvalStore: { sqlite: path }, approverMustDiffer: true });
    const r = await first.invoke(
      "refunds.create",
      { order: "o-1", card: "4111" },
      { surface: "mcp", actor: { id: "alice" } },
    );
    assert.equal(r.status, "approval_required");
    assert.equal(r.request.type, "manager");
    const rejected = await first.invoke(
      "refunds.create",
      { order: "o-2", card: "4111" },
      { surface: "mcp", actor: { id: "alice" } },
    );
    first.close();

    const second = await createCapabilityRegistry(router, {
      approvalStore: { sqlite: path },
      approverMustDiffer: true,
    });
    const stored = await second.approvals.get(r.request.id);
    assert.equal(stored.status, "pending");
    assert.deepEqual(stored.input, r.request.input);
    assert.equal(stored.inputHash, undefined); // the store's own, never shown (issue 15)
    assert.deepEqual(await second.redactApprovalInput(stored), { order: "o-1", card: "****", shownTo: "mcp" });
    const pending = await second.approvals.list({ status: "pending" });
    assert.deepEqual(pending.map((p) => p.id).sort(), [r.request.id, rejected.request.id].sort());
    // The actor may not approve their own request.
    assert.equal(
      (await second.approvals.approve(r.request.id, { approver: "alice" }).catch((e) => e)).code,
      "POLICY_DENIED",
    );
    const decided = await second.approvals.approve(r.request.id, { approver: "bob", reason: "ok" });
    assert.equal(decided.status, "approved");
    assert.equal(decided.decidedBy, "bob");
    await second.approvals.reject(rejected.request.id, { approver: "bob" });
    const out = await second.resume(r.request.id, { context: { clerk: "desk-3" } });
    assert.deepEqual(out, { status: "ok", output: { refunded: "o-1", by: "desk-3" } });
    assert.equal((await second.resume(r.request.id).catch((e) => e)).code, "APPROVAL_CONSUMED");
    assert.equal((await second.resume(rejected.request.id).catch((e) => e)).code, "APPROVAL_REJECTED");
    second.close();
  } finally {
    rmSync(path, { force: true });
  }
});

// The PostgreSQL store itself is tested against a real server in
// test/postgres/ (make test-postgres-bindings).
test("approval store options: bad values fail clearly", async () => {
  const router = { x: base.meta({ agent: agent() }).handler(async () => 1) };
  for (const approvalStore of [
    "disk",
    { sqlite: "" },
    { postgres: "" },
    { postgres: { url: 3 } },
    { postgres: "x", sqlite: "y" },
  ]) {
    const e = await createCapabilityRegistry(router, { approvalStore }).catch((x) => x);
    assert.ok(e instanceof CapabilityError, JSON.stringify(approvalStore));
    assert.equal(e.code, "INVALID_INPUT");
  }
});

test("a Rust panic becomes a thrown error; Node keeps running", () => {
  assert.throws(() => native.panicForTest(), /panic/);
  assert.equal(native.allErrorCodes().length, ERROR_CODES.length);
});

test("error codes: the TypeScript union and ERROR_CODES equal the core's allErrorCodes()", () => {
  const src = readFileSync(new URL("../src/generated/protocol.ts", import.meta.url), "utf8");
  const union = src.slice(
    src.indexOf("export type CapabilityErrorCode"),
    src.indexOf(";", src.indexOf("export type CapabilityErrorCode")),
  );
  const declared = [...union.matchAll(/"([A-Z_]+)"/g)].map((m) => m[1]);
  assert.deepEqual(declared, native.allErrorCodes());
  assert.deepEqual([...ERROR_CODES], native.allErrorCodes());
  for (const code of ERROR_CODES) assert.match(new CapabilityError(code, "x").kind, /^std:/);
  assert.throws(() => new CapabilityError("NOPE", "x"), TypeError);
});

test("step kinds: the façade's Kind mirror equals the core's StepKind numbering", () => {
  // Generated (cargo run -p orpc-agent-core --example mirrors); this checks the generator.
  const src = readFileSync(new URL("../src/generated/protocol.ts", import.meta.url), "utf8");
  const body = src.slice(
    src.indexOf("export const enum Kind"),
    src.indexOf("}", src.indexOf("export const enum Kind")),
  );
  const mirrored = Object.fromEntries(
    [...body.matchAll(/^\s*([A-Za-z]+) = (\d+),/gm)].map((m) => [m[1], Number(m[2])]),
  );
  const core = native.stepKinds();
  assert.equal(core.length, 13);
  for (const [i, name] of core.entries()) assert.equal(mirrored[name], i + 1, name);
  // Binding-only codes sit above the core's numbers.
  for (const [name, n] of Object.entries(mirrored)) if (!core.includes(name)) assert.ok(n > core.length, name);
});

test("the CommonJS entry is the same module instance as the ESM one", async () => {
  const require = createRequire(import.meta.url);
  const cjs = require("@orpc-agent/core");
  assert.equal(cjs.CapabilityError, CapabilityError);
  assert.equal(typeof cjs.createCapabilityRegistry, "function");
});

test("resume asRequester: only the requester on its surface resumes; anyone else consumes nothing, audited as themselves", async () => {
  const records = [];
  let runs = 0;
  const registry = await createCapabilityRegistry(
    {
      refund: base
        .meta({
          agent: agent({ sideEffect: "write", approval: { required: true }, expose: { mcp: true, direct: true } }),
        })
        .handler(async () => ++runs),
    },
    { audit: (r) => records.push(r) },
  );
  const made = await registry.invoke("refund", {}, { surface: "mcp", actor: { id: "alice" } });
  assert.equal(made.status, "approval_required");
  const id = made.request.id;
  await registry.approvals.approve(id, { approver: "bob" });
  for (const asRequester of [
    { surface: "mcp", actor: { id: "mallory" } },
    { surface: "direct", actor: { id: "alice" } },
    { surface: "mcp", actor: {} },
  ]) {
    const e = await registry.resume(id, { asRequester }).catch((x) => x);
    assert.equal(e.code, "APPROVAL_NOT_FOUND", JSON.stringify(asRequester));
    assert.equal((await registry.approvals.get(id)).status, "approved", "nothing consumed");
  }
  const refused = records.filter((r) => r.resumed && r.outcome === "APPROVAL_NOT_FOUND");
  assert.deepEqual(
    refused.map((r) => [r.surface, r.actorId ?? null]),
    [
      ["mcp", "mallory"],
      ["direct", "alice"],
      ["mcp", null],
    ],
  );
  assert.deepEqual(await registry.resume(id, { asRequester: { surface: "mcp", actor: { id: "alice" } } }), {
    status: "ok",
    output: 1,
  });
  assert.equal(runs, 1);
});

test("invoke without a frame rejects with a TypeError (never a synchronous throw)", async () => {
  const registry = await createCapabilityRegistry({
    p: base
      .meta({ agent: { description: "P.", expose: { direct: true }, sideEffect: "read", risk: "low" } })
      .handler(async () => 1),
  });
  for (const frame of [undefined, null, "direct"]) {
    let promise;
    assert.doesNotThrow(() => {
      promise = registry.invoke("p", {}, frame);
    });
    await assert.rejects(promise, TypeError);
  }
});

test("approval views show the status as of the read: an expired request is `expired`, and lists by it", async (t) => {
  // The registry's clock is `Date`: moved past the expiry, never waited on.
  t.mock.timers.enable({ apis: ["Date"], now: Date.now() });
  const registry = await createCapabilityRegistry({
    refund: base
      .meta({
        agent: {
          description: "Refund.",
          expose: { direct: true },
          sideEffect: "write",
          risk: "high",
          approval: { required: true, expiresInMs: 2_000 },
        },
      })
      .handler(async () => "refunded"),
  });
  const frame = { surface: "direct", actor: { id: "u" } };
  const gated = await registry.invoke("refund", {}, frame);
  assert.equal(gated.request.status, "pending");
  const id = gated.request.id;
  assert.equal((await registry.approvals.get(id)).status, "pending");
  assert.deepEqual(
    (await registry.approvals.list({ status: "pending" })).map((r) => r.id),
    [id],
  );
  t.mock.timers.tick(2_001);
  assert.equal((await registry.approvals.get(id)).status, "expired");
  assert.deepEqual(await registry.approvals.list({ status: "pending" }), [], "no longer listed as pending");
  assert.deepEqual(
    (await registry.approvals.list({ status: "expired" })).map((r) => r.id),
    [id],
  );
  await assert.rejects(registry.approvals.approve(id, { approver: "m" }), (e) => e.code === "APPROVAL_EXPIRED");
  // What a view returns can be handed back: the input view of an expired request.
  assert.deepEqual(await registry.redactApprovalInput(await registry.approvals.get(id)), {});
});

test("a result that arrives after the deadline is TIMEOUT even when the event loop was blocked (the core judges the time)", async () => {
  // A synchronous 300 ms handler with a 100 ms deadline: the deadline timer
  // cannot fire while the loop is blocked, so the result arrives first, at
  // a time past the deadline. Only lower bounds of time matter here.
  let ran = 0;
  const registry = await createCapabilityRegistry({
    blocks: base.meta({ agent: agent({ timeoutMs: 100 }) }).handler(() => {
      ran++;
      const until = Date.now() + 300;
      while (Date.now() < until); // blocks the event loop
      return "late";
    }),
  });
  const e = await registry.invoke("blocks", {}, { surface: "direct" }).catch((x) => x);
  assert.ok(e instanceof CapabilityError, `got ${JSON.stringify(e)}`);
  assert.equal(e.code, "TIMEOUT");
  assert.equal(ran, 1);
  assert.equal(registry.inFlight(), 0);
});

test("a validator that spends the deadline: the handler is never started, the call is TIMEOUT (the core is told the time)", async () => {
  let ran = 0;
  const slowSchema = {
    "~standard": {
      version: 1,
      vendor: "test",
      // Resolves only after the 50 ms deadline has passed (a lower bound).
      validate: (value) => new Promise((resolve) => setTimeout(() => resolve({ value }), 120)),
    },
  };
  const registry = await createCapabilityRegistry({
    slowInput: base
      .meta({ agent: agent({ timeoutMs: 50, sideEffect: "write", risk: "low" }) })
      .input(slowSchema)
      .handler(async () => {
        ran++;
        return "wrote";
      }),
  });
  const e = await registry.invoke("slowInput", { a: 1 }, { surface: "direct" }).catch((x) => x);
  assert.equal(e.code, "TIMEOUT", `got ${e.code}`);
  assert.equal(ran, 0, "no write after the deadline");
  assert.equal(registry.inFlight(), 0);
});

// The deadline is long enough that a loaded machine starts each handler
// before it (the core never starts one at its deadline).
test("an async validator, output validator or redactor that never settles ends at the call's deadline: TIMEOUT, nothing left in flight", async () => {
  const never = () => new Promise(() => {});
  const stuckSchema = { "~standard": { version: 1, vendor: "test", validate: never } };
  const okSchema = { "~standard": { version: 1, vendor: "test", validate: (value) => ({ value }) } };
  let ran = 0;
  const registry = await createCapabilityRegistry({
    stuckInput: base
      .meta({ agent: agent({ timeoutMs: 400 }) })
      .input(stuckSchema)
      .handler(async () => {
        ran++;
        return "x";
      }),
    stuckOutput: base
      .meta({ agent: agent({ timeoutMs: 400 }) })
      .input(okSchema)
      .output(stuckSchema)
      .handler(async () => {
        ran++;
        return "secret-out";
      }),
    stuckRedactor: base.meta({ agent: agent({ timeoutMs: 400, redact: { output: never } }) }).handler(async () => {
      ran++;
      return "secret-out";
    }),
  });
  for (const id of ["stuckInput", "stuckOutput", "stuckRedactor"]) {
    const e = await registry.invoke(id, {}, { surface: "direct" }).catch((x) => x);
    assert.ok(e instanceof CapabilityError, `${id}: ${JSON.stringify(e)}`);
    assert.equal(e.code, "TIMEOUT", id);
    assert.ok(!JSON.stringify(e.toJSON()).includes("secret-out"), id);
  }
  assert.equal(ran, 2, "the handlers after a good input ran; the stuck validator's did not");
  assert.equal(registry.inFlight(), 0, "nothing left in flight");
});

test("the pending quota is per principal: anonymous callers in other sessions are not blocked (issue 15)", async () => {
  const registry = await createCapabilityRegistry({
    gated: base
      .meta({ agent: agent({ expose: { mcp: true }, sideEffect: "write", approval: { required: true } }) })
      .input(z.object({ n: z.number() }))
      .handler(async () => null),
  });
  const call = (n, sessionId) => registry.invoke("gated", { n }, { surface: "mcp", sessionId });
  for (let n = 0; n < 1000; n++) assert.equal((await call(n, "s-1")).status, "approval_required");
  assert.equal((await call(1000, "s-1").catch((e) => e)).code, "LIMIT_EXCEEDED");
  const other = await call(0, "s-2");
  assert.equal(other.status, "approval_required");
  assert.equal(other.request.sessionId, "s-2");
  assert.equal((await call(0, undefined)).status, "approval_required");
});

test("a caller's cancellation at an awaited hook (validator, policy, redactor) ends the call at once: CANCELLED, one finished record", async () => {
  const records = [];
  // Each hook marks that it was entered, then never settles.
  const entered = new Map();
  const enteredHook = (id) => {
    let mark;
    entered.set(id, new Promise((r) => (mark = r)));
    return () => {
      mark();
      return new Promise(() => {});
    };
  };
  const never = {
    validated: enteredHook("validated"),
    checked: enteredHook("checked"),
    redacted: enteredHook("redacted"),
  };
  let runs = 0;
  const neverValidates = { "~standard": { version: 1, vendor: "test", validate: () => never.validated() } };
  const registry = await createCapabilityRegistry(
    {
      validated: base
        .meta({ agent: agent() })
        .input(neverValidates)
        .handler(async () => ++runs),
      checked: base
        .meta({ agent: agent({ policies: [{ name: "slow", evaluate: () => never.checked() }] }) })
        .handler(async () => ++runs),
      redacted: base
        .meta({ agent: agent({ redact: { output: () => never.redacted() } }) })
        .handler(async () => ({ secret: ++runs })),
    },
    { audit: (r) => records.push(r) },
  );
  // Each hook never settles and the deadline is the default 30 s away: only
  // the caller's abort, sent once the hook was entered, can end these calls.
  for (const [id, started] of [
    ["validated", false],
    ["checked", false],
    ["redacted", true],
  ]) {
    const controller = new AbortController();
    const call = registry.invoke(id, {}, { surface: "direct", signal: controller.signal });
    await entered.get(id);
    controller.abort();
    const e = await call.catch((x) => x);
    assert.equal(e.code, "CANCELLED", `${id}: ${e.code} ${e.message}`);
    const events = records.filter((r) => r.capabilityId === id).map((r) => [r.event, r.outcome ?? null]);
    assert.deepEqual(
      events,
      started
        ? [
            ["started", null],
            ["finished", "CANCELLED"],
          ]
        : [["finished", "CANCELLED"]],
      id,
    );
  }
  assert.equal(runs, 1, "only the redacted capability's handler ran (before its redactor)");
});

test("a call whose driver fails is still audited as finished (INTERNAL), the failure's text nowhere", async () => {
  const records = [];
  let runs = 0;
  const registry = await createCapabilityRegistry(
    { plain: base.meta({ agent: agent() }).handler(async () => ++runs) },
    { audit: (r) => records.push(r) },
  );
  const frame = {
    surface: "direct",
    get context() {
      throw new Error("card 4111 1111 1111 1111");
    },
  };
  const e = await registry.invoke("plain", {}, frame).catch((x) => x);
  assert.equal(e.code, "INTERNAL", `${e.code}: ${e.message}`);
  assert.doesNotMatch(JSON.stringify(e.toJSON?.() ?? e.message), /4111/);
  assert.equal(runs, 0);
  assert.deepEqual(
    records.map((r) => [r.event, r.outcome]),
    [["finished", "INTERNAL"]],
  );
  assert.doesNotMatch(JSON.stringify(records), /4111/);
});

test("a policy object's evaluate is called as its method: `this`, a class's #private state and helpers", async () => {
  class AllowList {
    name = "allow-list";
    #allowed;
    constructor(allowed) {
      this.#allowed = new Set(allowed);
    }
    evaluate({ frame }) {
      return this.decide(this.#allowed.has(frame.actor.id));
    }
    decide(ok) {
      return ok ? { decision: "allow" } : { decision: "deny", reason: "Not on the list." };
    }
  }
  // A class with public fields (its state, not policy fields) and `mode`
  // as a getter: shadow, so its deny is recorded, not enforced.
  class Watcher {
    seen = 0;
    get name() {
      return "watcher";
    }
    get mode() {
      return "shadow";
    }
    evaluate() {
      this.seen += 1;
      return { decision: "deny", reason: "Watched." };
    }
  }
  const watcher = new Watcher();
  const registry = await createCapabilityRegistry(
    {
      read: base
        .meta({ agent: agent({ policies: [new AllowList(["u1", "u2"]), watcher] }) })
        .handler(async () => ({ ok: true })),
    },
    { policies: [new AllowList(["u1"])] },
  );
  const frame = (id) => ({ surface: "direct", actor: { id } });
  assert.deepEqual(await registry.invoke("read", {}, frame("u1")), { status: "ok", output: { ok: true } });
  for (const id of ["u2", "u3"]) {
    const e = await registry.invoke("read", {}, frame(id)).then(assert.fail, (e) => e);
    assert.equal(e.code, "POLICY_DENIED", id);
    assert.match(e.message, /Not on the list\./, id);
  }
  assert.equal(watcher.seen, 1, "the shadow policy ran once (the allowed call) and did not deny it");
  registry.close();
});

test("an async audit subscriber or progress listener that rejects changes nothing and leaves no unhandled rejection", async () => {
  const unhandled = [];
  const onUnhandled = (reason) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    let delivered = 0;
    const registry = await createCapabilityRegistry(
      {
        count: base.meta({ agent: agent() }).handler(async ({ progress }) => {
          progress(1, 2);
          progress(2, 2);
          return { ok: true };
        }),
      },
      {
        audit: async () => {
          delivered += 1;
          throw new Error("the audit database is down");
        },
      },
    );
    let heard = 0;
    const onProgress = async () => {
      heard += 1;
      throw new Error("the progress channel is closed");
    };
    const r = await registry.invoke("count", {}, { surface: "direct", onProgress });
    assert.deepEqual(r, { status: "ok", output: { ok: true } });
    // A rejection is reported unhandled once the microtasks drain: two
    // turns of the event loop are past that point.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(delivered, 2, "started and finished");
    assert.equal(heard, 2, "both reports heard");
    assert.deepEqual(unhandled, []);
    registry.close();
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});

test("a validator that answers no Standard Schema result, or issues of another shape, is a failed validator (INVALID_INPUT), not INTERNAL", async () => {
  const answering = (result) => ({ "~standard": { version: 1, vendor: "test", validate: () => result } });
  const results = {
    null: null,
    number: 5,
    issuesText: { issues: "wrong" },
    nullIssue: { issues: [null] },
    textPath: { issues: [{ message: "bad", path: "email" }] },
  };
  const router = Object.fromEntries(
    Object.entries(results).map(([name, result]) => [
      name,
      base
        .meta({ agent: agent() })
        .input(answering(result))
        .handler(async () => ({ ran: true })),
    ]),
  );
  const registry = await createCapabilityRegistry(router, { logger: false });
  for (const name of Object.keys(results)) {
    const e = await registry.invoke(name, {}, { surface: "direct" }).then(assert.fail, (e) => e);
    assert.equal(e.code, "INVALID_INPUT", name);
    assert.equal(e.message, "The input could not be validated, so the call did not run.", name);
  }
  registry.close();
});

test("a CapabilityError thrown inside a zod refine refuses the input with its message (zod rejects the promise it retries with)", async () => {
  let ran = 0;
  const registry = await createCapabilityRegistry({
    book: base
      .meta({ agent: agent() })
      .input(
        z.object({ date: z.string() }).refine((v) => {
          if (v.date < "2026") throw new CapabilityError("INVALID_INPUT", "Pick a departure date in the future.");
          return true;
        }),
      )
      .handler(async () => {
        ran += 1;
        return { booked: true };
      }),
  });
  const e = await registry.invoke("book", { date: "2020-01-01" }, { surface: "direct" }).then(assert.fail, (e) => e);
  assert.equal(e.code, "INVALID_INPUT");
  assert.equal(e.message, "Pick a departure date in the future.");
  assert.equal(ran, 0);
  assert.deepEqual(await registry.invoke("book", { date: "2027-01-01" }, { surface: "direct" }), {
    status: "ok",
    output: { booked: true },
  });
  registry.close();
});

test("an actor id or approver with a lone surrogate is refused, never rewritten into another caller's (U+FFFD)", async () => {
  const router = {
    refund: base
      .meta({
        agent: agent({ expose: { mcp: true }, sideEffect: "write", risk: "high", approval: { required: true } }),
      })
      .input(z.object({ id: z.string() }))
      .handler(async ({ input }) => input),
  };
  for (const options of [{}, { audit: () => {} }]) {
    const registry = await createCapabilityRegistry(router, { approvalStore: "memory", ...options });
    for (const frame of [
      { surface: "mcp", actor: { id: "ann\ud800" } }, // crosses as a bare id
      { surface: "mcp", actor: { id: "ann\udfff" }, requestId: "r-1" }, // crosses as JSON
    ]) {
      await assert.rejects(registry.invoke("refund", { id: "o-1" }, frame), (e) => {
        assert.equal(e.code, "INVALID_INPUT");
        assert.equal(e.details?.reason, "NOT_JSON_VALUE");
        assert.match(e.message, /\/actor\/id/);
        return true;
      });
    }
    assert.deepEqual(await registry.approvals.list(), [], "no request stored under a rewritten actor");
    const made = await registry.invoke("refund", { id: "o-1" }, { surface: "mcp", actor: { id: "ann" } });
    await assert.rejects(registry.approvals.approve(made.request.id, { approver: "eve\ud800" }), TypeError);
    await assert.rejects(registry.approvals.reject(made.request.id, { approver: "eve", reason: "r\udc80" }), TypeError);
    assert.equal((await registry.approvals.get(made.request.id)).status, "pending");
    // A list filter's text likewise, naming the key (not a JSON parse error).
    for (const key of ["capabilityId", "actorId", "cursor"]) {
      await assert.rejects(registry.approvals.list({ [key]: "a\ud800" }), (e) => {
        assert.equal(e.code, "INVALID_INPUT");
        assert.equal(
          e.message,
          `input at /${key} is a string that is not valid UTF-8, which the JSON data model has no place for`,
        );
        return true;
      });
    }
    registry.close();
  }
});

test("a repeated MCP call by a caller already gone (an aborted signal) consumes nothing and stores nothing: its next call runs the approval once", async () => {
  const runs = [];
  const router = {
    refund: base
      .meta({
        agent: agent({ expose: { mcp: true }, sideEffect: "write", risk: "high", approval: { required: true } }),
      })
      .input(z.object({ id: z.string() }))
      .handler(async ({ input }) => {
        runs.push(input);
        return { ok: true };
      }),
  };
  for (const options of [{}, { audit: () => {} }]) {
    runs.length = 0;
    const registry = await createCapabilityRegistry(router, { approvalStore: "memory", ...options });
    const frame = { surface: "mcp", actor: { id: "u1" } };
    const first = await registry.invoke("refund", { id: "o-1" }, frame);
    await registry.approvals.approve(first.request.id, { approver: "boss" });
    const gone = AbortSignal.abort();
    for (const input of [{ id: "o-1" }, { id: "o-2" }]) {
      await assert.rejects(registry.invoke("refund", input, { ...frame, signal: gone }), { code: "CANCELLED" });
    }
    assert.equal((await registry.approvals.get(first.request.id)).status, "approved", "not consumed");
    assert.equal((await registry.approvals.list()).length, 1, "no request stored for the caller already gone");
    assert.deepEqual(runs, []);
    assert.equal((await registry.invoke("refund", { id: "o-1" }, frame)).status, "ok");
    assert.deepEqual(runs, [{ id: "o-1" }], "the approval ran once, on the next call");
    registry.close();
  }
});

// An approval-input redactor that never settles would hold the approval UI
// (or an MCP call asking the person) for ever: it is bounded by the
// capability's timeout, the core's bound, and fails as a throwing one does.
test("an approval-input redactor that never settles fails the view at the capability's timeout", async () => {
  const registry = await createCapabilityRegistry({
    refund: base
      .meta({
        agent: agent({
          expose: { mcp: true },
          sideEffect: "write",
          risk: "high",
          timeoutMs: 200,
          approval: { required: true },
          redact: { approvalInput: () => new Promise(() => {}) },
        }),
      })
      .input(z.object({ id: z.string() }))
      .handler(async ({ input }) => input),
  });
  const made = await registry.invoke("refund", { id: "o-1" }, { surface: "mcp", actor: { id: "ann" } });
  const t0 = Date.now();
  await assert.rejects(registry.redactApprovalInput(made.request), { code: "EXECUTION_FAILED" });
  assert.ok(Date.now() - t0 < 10_000);
  registry.close();
});

// A host policy's reason is the app's text at run time, shown to the model,
// audited and stored with a request: the core cuts it to 4 096 bytes.
test("a host policy's reason of megabytes reaches the caller cut to the core's bound", async () => {
  const registry = await createCapabilityRegistry(
    { read: base.meta({ agent: agent() }).handler(async () => "ok") },
    { policies: [async () => ({ decision: "deny", reason: "x".repeat(5_000_000) })] },
  );
  const e = await registry.invoke("read", {}, { surface: "direct" }).catch((x) => x);
  assert.equal(e.code, "POLICY_DENIED");
  assert.ok(e.message.length < 5_000, `${e.message.length} characters`);
  assert.ok(e.message.includes("x".repeat(1_000)));
  registry.close();
});
