// SI-1 … SI-12 (DESIGN §9) through the public API, one test (or more) each.
import assert from "node:assert/strict";
import { test } from "node:test";
import { os } from "@orpc/server";
import * as z from "zod";

import {
  agentProcedure,
  CapabilityError,
  createCapabilityRegistry,
  inputHash,
  RegistryValidationError,
} from "@orpc-agent/core";

const base = agentProcedure(os.$context());
const agent = (extra = {}) => ({
  description: "Does a thing.",
  expose: { mcp: true },
  sideEffect: "read",
  risk: "low",
  ...extra,
});
const echo = (meta, schema) => {
  let p = base.meta({ agent: meta });
  if (schema) p = p.input(schema);
  return p.handler(async ({ input }) => input);
};
const codeOf = (p) =>
  p.then(
    () => "ok",
    (e) => (e instanceof CapabilityError ? e.code : `not a CapabilityError: ${e}`),
  );

test("SI-1 exposure is deny-by-default per surface; only literal true exposes", async () => {
  const registry = await createCapabilityRegistry({
    onMcp: echo(agent({ expose: { mcp: true, direct: false } })),
  });
  assert.equal((await registry.invoke("onMcp", {}, { surface: "mcp" })).status, "ok");
  assert.equal(await codeOf(registry.invoke("onMcp", {}, { surface: "direct" })), "NOT_FOUND");
  assert.equal(await codeOf(registry.invoke("onMcp", {}, { surface: "aiSdk" })), "NOT_FOUND");
  const bad = await createCapabilityRegistry({ x: echo(agent({ expose: { mcp: "yes" } })) }).catch((e) => e);
  assert.ok(bad instanceof RegistryValidationError);
  assert.deepEqual(
    bad.problems.map((p) => [p.path, p.code]),
    [["expose.mcp", "WRONG_TYPE"]],
  );
});

test("SI-2 only the core's five surface names are surfaces: Object.prototype's names are refused, never direct", async () => {
  let ran = 0;
  const registry = await createCapabilityRegistry({
    onlyDirect: base.meta({ agent: agent({ expose: { direct: true } }) }).handler(async () => {
      ran++;
      return "ran";
    }),
  });
  for (const surface of ["constructor", "__proto__", "toString", "valueOf", "hasOwnProperty", "isPrototypeOf", ""]) {
    assert.equal(await codeOf(registry.invoke("onlyDirect", {}, { surface })), "INVALID_INPUT", surface);
    assert.equal(
      await codeOf(registry.invoke("onlyDirect", {}, { surface, actor: { id: "a" } })),
      "INVALID_INPUT",
      surface,
    );
  }
  assert.equal(ran, 0, "no capability ran on a made-up surface");
  assert.deepEqual(await registry.invoke("onlyDirect", {}, { surface: "direct" }), { status: "ok", output: "ran" });
});

test("SI-2 the surface comes from the frame, never from the input", async () => {
  const registry = await createCapabilityRegistry({ onMcp: echo(agent()) });
  assert.equal(await codeOf(registry.invoke("onMcp", { surface: "mcp" }, { surface: "direct" })), "NOT_FOUND");
  assert.equal(await codeOf(registry.invoke("onMcp", {}, { surface: "bogus" })), "INVALID_INPUT");
});

test("SI-3 hooks get frozen copies; a resumed approval runs as the recorded surface and actor", async () => {
  const attempts = [];
  const infos = [];
  const registry = await createCapabilityRegistry(
    {
      pay: echo(
        agent({
          sideEffect: "external",
          approval: { required: true },
          expose: { mcp: true, direct: true },
          redact: {
            output: (o, info) => {
              infos.push(info);
              try {
                info.actor.roles.push("admin");
              } catch {
                attempts.push("roles frozen");
              }
              return o;
            },
          },
        }),
      ),
    },
    {
      policies: [
        (req) => {
          try {
            req.frame.actor.id = "mallory";
          } catch {
            attempts.push("actor frozen");
          }
          try {
            req.frame.surface = "direct";
          } catch {
            attempts.push("surface frozen");
          }
          return { decision: "abstain" };
        },
      ],
    },
  );
  const actor = { id: "alice", roles: ["clerk"] };
  const r = await registry.invoke("pay", { amount: 5 }, { surface: "mcp", actor });
  assert.equal(r.status, "approval_required");
  assert.equal(actor.id, "alice");
  assert.deepEqual(attempts, ["actor frozen", "surface frozen"]);
  await registry.approvals.approve(r.request.id, { approver: "boss" });
  const resumed = await registry.resume(r.request.id, { context: { app: 1 } });
  assert.deepEqual(resumed, { status: "ok", output: { amount: 5 } });
  assert.equal(infos[0].surface, "mcp"); // recorded, not the resume's "direct"
  assert.equal(infos[0].actor.id, "alice");
  assert.deepEqual(infos[0].context, { app: 1 });
  assert.ok(Object.isFrozen(infos[0]));
  assert.ok(Object.isFrozen(infos[0].context), "hooks get a frozen copy of the context");
  assert.deepEqual(attempts.at(-1), "roles frozen");
});

test("SI-3 a host policy sees the core's frozen frame, not the app's object", async () => {
  // What a Python or Swift policy sees: the actor's known fields only,
  // ids as stage 3 read them (an empty one is none), as at the call's start.
  const seen = [];
  let release;
  const later = new Promise((resolve) => (release = resolve));
  const registry = await createCapabilityRegistry(
    { read: echo(agent()) },
    {
      policies: [
        async (req) => {
          seen.push(structuredClone(req.frame));
          await later; // the app changes its actor meanwhile
          seen.push(structuredClone(req.frame));
          return { decision: "allow" };
        },
      ],
    },
  );
  class Caller {
    id = "alice";
    scopes = ["refund"]; // not an actor field: the core drops it
    get roles() {
      return ["admin"]; // a getter JSON never reads: the core sees no roles
    }
  }
  const actor = new Caller();
  const call = registry.invoke("read", { n: 1 }, { surface: "mcp", actor, sessionId: "", agentId: "a-1" });
  await new Promise((resolve) => setImmediate(resolve));
  actor.id = "mallory";
  release();
  assert.equal((await call).status, "ok");
  const expected = { surface: "mcp", actor: { id: "alice", roles: [], attributes: {} }, agentId: "a-1" };
  for (const frame of seen) {
    assert.deepEqual(
      Object.fromEntries(Object.entries(frame).filter(([k, v]) => k !== "context" && v !== undefined)),
      expected,
    );
  }
  assert.equal(seen.length, 2);
});

test("SI-4 invalid metadata never serves: one aggregate error at build", async () => {
  const e = await createCapabilityRegistry({
    a: echo({ description: "", expose: { nope: true }, sideEffect: "write", risk: "huge", retry: { maxAttempts: 2 } }),
    b: echo(agent({ timeoutMs: 0 })),
  }).catch((x) => x);
  assert.ok(e instanceof RegistryValidationError);
  const codes = e.problems.map((p) => `${p.capability}:${p.path}:${p.code}`).sort();
  assert.deepEqual(codes, [
    "a:description:MISSING_FIELD",
    "a:expose.nope:UNKNOWN_SURFACE",
    "a:retry:RETRY_NOT_IDEMPOTENT",
    "a:risk:UNKNOWN_VALUE",
    "b:timeoutMs:NON_POSITIVE",
  ]);
});

test("SI-4 a declared hook without an implementation is a MISSING_HOOK problem, reported with the others", async () => {
  const e = await createCapabilityRegistry(
    {
      a: echo(
        agent({
          redact: { output: true, approvalInput: true },
          retry: { maxAttempts: 1, retryOn: true },
          policies: [{ decision: "allow" }, { host: true, name: "no-fn" }, (_req) => ({ decision: "allow" })],
        }),
      ),
      b: echo(agent({ timeoutMs: 0, redact: { output: (o) => o } })),
    },
    { policies: [{ host: true }, () => ({ decision: "allow" })] },
  ).catch((x) => x);
  assert.ok(e instanceof RegistryValidationError, String(e));
  const codes = e.problems.map((p) => `${p.capability ?? "-"}:${p.path}:${p.code}`).sort();
  assert.deepEqual(codes, [
    "-:policies[0]:MISSING_HOOK",
    "a:policies[1]:MISSING_HOOK",
    "a:redact.approvalInput:MISSING_HOOK",
    "a:redact.output:MISSING_HOOK",
    "a:retry.retryOn:MISSING_HOOK",
    "b:timeoutMs:NON_POSITIVE",
  ]);
});

test("SI-5 policies, approval hashes and handlers see only validated input", async () => {
  const seen = [];
  const schema = z.object({ amount: z.number(), currency: z.string().default("EUR") }).strip();
  const registry = await createCapabilityRegistry({
    pay: base
      .meta({
        agent: agent({
          sideEffect: "external",
          approval: { required: true },
          policies: [
            (req) => {
              seen.push(req.input);
              return { decision: "abstain" };
            },
          ],
        }),
      })
      .input(schema)
      .handler(async ({ input }) => {
        seen.push(input);
        return input;
      }),
  });
  const r = await registry.invoke("pay", { amount: 7, extra: "dropped" }, { surface: "mcp" });
  assert.deepEqual(seen, [{ amount: 7, currency: "EUR" }]);
  assert.deepEqual(r.request.input, { amount: 7, currency: "EUR" });
  assert.equal(inputHash("pay", r.request.input), inputHash("pay", { amount: 7, currency: "EUR" }));
  await registry.approvals.approve(r.request.id);
  await registry.resume(r.request.id);
  assert.deepEqual(seen[1], { amount: 7, currency: "EUR" });
});

test("SI-6 runtime policies run before capability policies; first deny wins; a failing policy denies", async () => {
  const order = [];
  const p = (name, decision) => ({
    name,
    evaluate: () => {
      order.push(name);
      return { decision };
    },
  });
  const registry = await createCapabilityRegistry(
    {
      a: echo(agent({ policies: [p("cap-1", "abstain"), p("cap-2", "deny"), p("cap-3", "allow")] })),
      b: echo(
        agent({
          policies: [
            {
              name: "boom",
              evaluate: () => {
                throw new Error("secret s3cr3t");
              },
            },
          ],
        }),
      ),
    },
    { policies: [p("rt-1", "allow"), p("rt-2", "abstain")] },
  );
  const e = await registry.invoke("a", {}, { surface: "mcp" }).catch((x) => x);
  assert.equal(e.code, "POLICY_DENIED");
  assert.deepEqual(order, ["rt-1", "rt-2", "cap-1", "cap-2"]);
  assert.deepEqual(e.details, { policy: "cap-2", scope: "capability", index: 1 });
  const f = await registry.invoke("b", {}, { surface: "mcp" }).catch((x) => x);
  assert.equal(f.code, "POLICY_DENIED");
  assert.ok(!JSON.stringify(f.toJSON()).includes("s3cr3t"));
});

test("SI-7 an approval binds capability + input, is single-use and expires", async (t) => {
  // Expiry is crossed by moving the clock past it (node:test's mock `Date`,
  // the clock the registry reads): no real-time window a loaded machine
  // could outlast.
  t.mock.timers.enable({ apis: ["Date"], now: Date.now() });
  const registry = await createCapabilityRegistry({
    pay: echo(agent({ sideEffect: "external", approval: { required: true, expiresInMs: 2_000 } })),
  });
  const r = await registry.invoke("pay", { amount: 1 }, { surface: "mcp" });
  // The hash binds the stored input; it is the store's, never shown (issue 15).
  assert.equal(r.request.inputHash, undefined);
  assert.equal(inputHash("pay", r.request.input), inputHash("pay", { amount: 1 }));
  assert.notEqual(inputHash("pay", r.request.input), inputHash("pay", { amount: 2 }));
  assert.equal(await codeOf(registry.resume(r.request.id)), "APPROVAL_PENDING");
  await registry.approvals.approve(r.request.id);
  assert.deepEqual(await registry.resume(r.request.id), { status: "ok", output: { amount: 1 } });
  assert.equal(await codeOf(registry.resume(r.request.id)), "APPROVAL_CONSUMED");
  const late = await registry.invoke("pay", { amount: 3 }, { surface: "mcp" });
  await registry.approvals.approve(late.request.id);
  t.mock.timers.tick(2_001);
  assert.equal(await codeOf(registry.resume(late.request.id)), "APPROVAL_EXPIRED");
  assert.equal(await codeOf(registry.resume("apr_00000000000000000000000000000000")), "APPROVAL_NOT_FOUND");
});

test("SI-8 an unexposed capability is indistinguishable from a missing one", async () => {
  const registry = await createCapabilityRegistry({ hidden: echo(agent({ expose: { direct: true } })) });
  const a = await registry.invoke("hidden", {}, { surface: "mcp" }).catch((e) => e.toJSON());
  const b = await registry.invoke("no.such.thing", {}, { surface: "mcp" }).catch((e) => e.toJSON());
  assert.equal(a.code, "NOT_FOUND");
  assert.deepEqual(a, b);
  assert.ok(!a.message.includes("hidden"));
});

test("SI-9 the handler's signal aborts at the deadline and a late result is discarded", async () => {
  let signalAtDeadline;
  let finished = false;
  let release;
  const released = new Promise((r) => (release = r));
  const registry = await createCapabilityRegistry({
    // Long enough that a loaded machine starts the handler before it.
    slow: base.meta({ agent: agent({ timeoutMs: 300 }) }).handler(async ({ signal }) => {
      await released; // ignores the signal: runs on until the test releases it
      signalAtDeadline = signal.aborted;
      finished = true;
      return "late";
    }),
  });
  // The handler can finish only after the call returned (the release comes
  // after it), so returning at all shows the deadline did not wait for it.
  const e = await registry.invoke("slow", {}, { surface: "mcp" }).catch((x) => x);
  assert.equal(e.code, "TIMEOUT");
  assert.equal(finished, false);
  release();
  await released;
  await new Promise((r) => setImmediate(r));
  assert.equal(finished, true);
  assert.equal(signalAtDeadline, true);
  assert.equal(registry.inFlight(), 0);
});

test("SI-10 nothing unredacted leaves: results, errors, audit payloads", async () => {
  const records = [];
  const registry = await createCapabilityRegistry(
    {
      card: base
        .meta({ agent: agent({ redact: { output: (o) => ({ ...o, pan: "****" }) } }) })
        .handler(async () => ({ name: "Ada", pan: "4111111111111111" })),
      broken: base
        .meta({
          agent: agent({
            redact: {
              output: () => {
                throw new Error("4111111111111111");
              },
            },
          }),
        })
        .handler(async () => ({ pan: "4111111111111111" })),
    },
    { audit: { subscriber: (r) => records.push(r), payloads: true } },
  );
  const ok = await registry.invoke("card", {}, { surface: "mcp" });
  assert.deepEqual(ok.output, { name: "Ada", pan: "****" });
  const e = await registry.invoke("broken", {}, { surface: "mcp" }).catch((x) => x);
  assert.equal(e.code, "EXECUTION_FAILED");
  const everything = JSON.stringify([ok, e.toJSON(), e.message, records]);
  assert.ok(!everything.includes("4111111111111111"));
  assert.deepEqual(records.find((r) => r.event === "finished" && r.outcome === "ok").output, {
    name: "Ada",
    pan: "****",
  });
});

test("SI-11 retries wrap the handler only, on retryable errors, for read or idempotent+configured writes", async () => {
  const calls = { read: 0, fatal: 0 };
  const flaky = (key, retryable) => async () => {
    calls[key]++;
    if (calls[key] < 3) throw new CapabilityError("EXECUTION_FAILED", "flaky", { retryable });
    return calls[key];
  };
  const registry = await createCapabilityRegistry({
    read: base.meta({ agent: agent({ retry: { maxAttempts: 2, backoffMs: 1 } }) }).handler(flaky("read", true)),
    fatal: base.meta({ agent: agent({ retry: { maxAttempts: 5, backoffMs: 0 } }) }).handler(flaky("fatal", false)),
  });
  assert.deepEqual(await registry.invoke("read", {}, { surface: "mcp" }), { status: "ok", output: 3 });
  assert.equal(await codeOf(registry.invoke("fatal", {}, { surface: "mcp" })), "EXECUTION_FAILED");
  assert.equal(calls.fatal, 1);
  const e = await createCapabilityRegistry({
    w: echo(agent({ sideEffect: "write", retry: { maxAttempts: 1 } })),
  }).catch((x) => x);
  assert.deepEqual(
    e.problems.map((p) => p.code),
    ["RETRY_NOT_IDEMPOTENT"],
  );
});

test("SI-12 discovery: contextual grants no authority", async () => {
  const registry = await createCapabilityRegistry({
    ctx: echo(
      agent({ discovery: "contextual", expose: { aiSdk: true }, sideEffect: "write", approval: { required: true } }),
    ),
  });
  assert.equal(registry.descriptors({ surface: "aiSdk" })[0].discovery, "contextual");
  assert.equal(await codeOf(registry.invoke("ctx", {}, { surface: "direct" })), "NOT_FOUND");
  assert.equal(
    (await registry.invoke("ctx", {}, { surface: "aiSdk", actor: { id: "u1" } })).status,
    "approval_required",
  );
});
