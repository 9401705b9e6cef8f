// Public API that no other suite asserts values of: the policy helpers
// (`allow`, `abstain`, `deny`, `requireApproval`), the runtime option
// `defaults.approvalExpiresInMs`, and `registry.resume()` with `signal` and
// `onProgress`. Every wait is on an event (a handler's start, a progress
// report), bounded by the capability's `timeoutMs`, never by a sleep.
import assert from "node:assert/strict";
import { test } from "node:test";
import { os } from "@orpc/server";
import * as z from "zod";

import {
  abstain,
  agentProcedure,
  allow,
  CapabilityError,
  createCapabilityRegistry,
  deny,
  requireApproval,
} from "@orpc-agent/core";

const base = agentProcedure(os.$context());
const agent = (extra = {}) => ({
  description: "Does a thing.",
  expose: { direct: true },
  sideEffect: "read",
  risk: "low",
  ...extra,
});
const frame = { surface: "direct", actor: { id: "agent-1" } };
/** The core's default expiry of an approval request (15 min) and reason. */
const DEFAULT_EXPIRES_IN_MS = 900_000;
const DEFAULT_REASON = "This call needs approval before it runs.";

/** A promise and its resolver: the tests wait on events, not on time. */
function deferred() {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
}

/** An echo capability with `meta` and a log of the inputs its handler ran with. */
function echo(meta) {
  const ran = [];
  const procedure = base
    .meta({ agent: agent(meta) })
    .input(z.object({ n: z.number() }))
    .handler(async ({ input }) => {
      ran.push(input);
      return input;
    });
  return { procedure, ran };
}

/** What the `finished` audit record says each policy decided. */
const policyDecisions = (audit) =>
  audit.filter((r) => r.event === "finished").flatMap((r) => r.policies.map((p) => [p.name, p.decision]));

test("the policy helpers build exactly the decisions the core reads", () => {
  assert.deepEqual(allow(), { decision: "allow" });
  assert.deepEqual(abstain(), { decision: "abstain" });
  assert.deepEqual(deny(), { decision: "deny" });
  assert.deepEqual(deny("not today"), { decision: "deny", reason: "not today" });
  assert.deepEqual(requireApproval(), { decision: "requireApproval" });
  assert.deepEqual(requireApproval({ type: "manager", reason: "big refund", expiresInMs: 120_000 }), {
    decision: "requireApproval",
    approvalType: "manager",
    reason: "big refund",
    expiresInMs: 120_000,
  });
  // Each call is a fresh object: a policy may not corrupt the next one's answer.
  assert.notEqual(allow(), allow());
});

test("allow() and abstain() let the call run and are audited as such; neither outvotes a deny or lifts an approval", async () => {
  const audit = [];
  const open = echo({
    policies: [
      { name: "p-allow", evaluate: () => allow() },
      { name: "p-abstain", evaluate: () => abstain() },
    ],
  });
  const denied = echo({
    policies: [
      { name: "p-allow", evaluate: () => allow() },
      { name: "p-deny", evaluate: () => deny("closed on Sundays") },
    ],
  });
  const gated = echo({
    sideEffect: "write",
    approval: { required: true },
    policies: [{ name: "p-allow", evaluate: () => allow() }],
  });
  const registry = await createCapabilityRegistry(
    { open: open.procedure, denied: denied.procedure, gated: gated.procedure },
    { audit: (r) => audit.push(r) },
  );

  assert.deepEqual(await registry.invoke("open", { n: 1 }, frame), { status: "ok", output: { n: 1 } });
  assert.deepEqual(open.ran, [{ n: 1 }]);
  assert.deepEqual(policyDecisions(audit), [
    ["p-allow", "allow"],
    ["p-abstain", "abstain"],
  ]);

  audit.length = 0;
  const error = await registry.invoke("denied", { n: 2 }, frame).catch((e) => e);
  assert.equal(error.code, "POLICY_DENIED");
  assert.equal(error.message, 'Denied by policy "p-deny": closed on Sundays');
  assert.deepEqual(denied.ran, [], "an earlier allow() does not outvote a deny");
  assert.deepEqual(policyDecisions(audit), [
    ["p-allow", "allow"],
    ["p-deny", "deny"],
  ]);

  const outcome = await registry.invoke("gated", { n: 3 }, frame);
  assert.equal(outcome.status, "approval_required", "allow() does not lift approval.required");
  assert.deepEqual(gated.ran, []);
  registry.close();
});

test("requireApproval() gates the call: with its type, reason and expiry, or the defaults without them", async () => {
  const audit = [];
  const sized = echo({
    policies: [
      {
        name: "p-big",
        evaluate: () => requireApproval({ type: "manager", reason: "big refund", expiresInMs: 120_000 }),
      },
    ],
  });
  const plain = echo({ policies: [{ name: "p-plain", evaluate: () => requireApproval() }] });
  const registry = await createCapabilityRegistry(
    { sized: sized.procedure, plain: plain.procedure },
    { audit: (r) => audit.push(r) },
  );

  const first = await registry.invoke("sized", { n: 1 }, frame);
  assert.equal(first.status, "approval_required");
  assert.equal(first.request.type, "manager");
  assert.equal(first.request.reason, "big refund");
  assert.equal(first.request.expiresAt - first.request.createdAt, 120_000);
  assert.equal(first.request.status, "pending");
  assert.deepEqual(policyDecisions(audit), [["p-big", "requireApproval"]]);

  const second = await registry.invoke("plain", { n: 2 }, frame);
  assert.equal(second.status, "approval_required");
  assert.equal(second.request.type, undefined);
  assert.equal(second.request.reason, DEFAULT_REASON);
  assert.equal(second.request.expiresAt - second.request.createdAt, DEFAULT_EXPIRES_IN_MS);
  assert.deepEqual(sized.ran, []);
  assert.deepEqual(plain.ran, []);
  registry.close();
});

test("defaults.approvalExpiresInMs: a gated request's expiresAt - createdAt equals it", async () => {
  const ONE_HOUR = 3_600_000;
  const gatedRouter = () => ({
    static: echo({ sideEffect: "write", approval: { required: true } }).procedure,
    byPolicy: echo({ policies: [() => requireApproval({ reason: "check" })] }).procedure,
    // A capability's own expiry still wins over the runtime default.
    own: echo({ sideEffect: "write", approval: { required: true, expiresInMs: 60_000 } }).procedure,
  });
  const registry = await createCapabilityRegistry(gatedRouter(), { defaults: { approvalExpiresInMs: ONE_HOUR } });
  for (const id of ["static", "byPolicy"]) {
    const { status, request } = await registry.invoke(id, { n: 1 }, frame);
    assert.equal(status, "approval_required", id);
    assert.equal(request.expiresAt - request.createdAt, ONE_HOUR, id);
    const stored = await registry.approvals.get(request.id);
    assert.equal(stored.expiresAt - stored.createdAt, ONE_HOUR, `${id}: as stored`);
  }
  const own = await registry.invoke("own", { n: 1 }, frame);
  assert.equal(own.request.expiresAt - own.request.createdAt, 60_000);
  registry.close();

  // Without the option the core's own default applies: the value above is the option's.
  const plain = await createCapabilityRegistry(gatedRouter());
  const { request } = await plain.invoke("static", { n: 1 }, frame);
  assert.equal(request.expiresAt - request.createdAt, DEFAULT_EXPIRES_IN_MS);
  assert.notEqual(ONE_HOUR, DEFAULT_EXPIRES_IN_MS);
  plain.close();
});

/**
 * A registry whose `refund` needs approval, with one request already made
 * and approved, ready to resume; `handler` is the refund's handler. The
 * capability's 10 s timeout bounds every wait: a resume that does not
 * react to its signal ends in TIMEOUT, not in a hung test.
 */
async function approvedRequest(handler) {
  const registry = await createCapabilityRegistry({
    refund: base
      .meta({ agent: agent({ sideEffect: "write", risk: "high", approval: { required: true }, timeoutMs: 10_000 }) })
      .input(z.object({ n: z.number() }))
      .handler(handler),
  });
  const outcome = await registry.invoke("refund", { n: 7 }, frame);
  assert.equal(outcome.status, "approval_required");
  await registry.approvals.approve(outcome.request.id, { approver: "manager-1" });
  return { registry, requestId: outcome.request.id };
}

test("resume() with an aborted signal: CANCELLED, nothing consumed, and a later resume runs once", async () => {
  let ran = 0;
  const { registry, requestId } = await approvedRequest(async ({ input }) => {
    ran++;
    return input;
  });
  const controller = new AbortController();
  controller.abort(new Error("the user left"));
  for (const options of [
    { signal: controller.signal },
    // As the gateway and the MCP adapter resume: limited to the requester.
    { signal: controller.signal, asRequester: { surface: "direct", actor: { id: "agent-1" } } },
    { signal: controller.signal, asRequester: { surface: "direct", actor: { id: "agent-1" } }, throughTool: "refund" },
  ]) {
    const error = await registry.resume(requestId, options).catch((e) => e);
    assert.equal(error.code, "CANCELLED", `${error.code}: ${error.message}`);
    assert.equal(error.message, "The call was cancelled by the caller.");
    assert.equal(ran, 0);
    assert.equal(registry.inFlight(), 0);
    assert.equal((await registry.approvals.get(requestId)).status, "approved", "a cancelled resume consumes nothing");
  }
  assert.deepEqual(await registry.resume(requestId), { status: "ok", output: { n: 7 } });
  assert.equal(ran, 1);
  assert.equal((await registry.approvals.get(requestId)).status, "consumed");
  assert.equal((await registry.resume(requestId).catch((e) => e)).code, "APPROVAL_CONSUMED", "and only once");
  assert.equal(ran, 1);
  registry.close();
});

test("resume() with a signal aborted while the handler runs: CANCELLED, and the handler's signal aborts", async () => {
  const started = deferred();
  let handlerSignal;
  const { registry, requestId } = await approvedRequest(({ signal }) => {
    handlerSignal = signal;
    started.resolve();
    return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
  });
  const controller = new AbortController();
  const resumed = registry.resume(requestId, { signal: controller.signal });
  // The handler's start, or the resume settling without it (then the test fails below, not hangs).
  await Promise.race([started.promise, resumed.catch(() => {})]);
  assert.ok(handlerSignal, "the handler started");
  assert.equal(handlerSignal.aborted, false);
  controller.abort(new Error("the user left"));
  const error = await resumed.catch((e) => e);
  assert.equal(error.code, "CANCELLED", `${error.code}: ${error.message}`);
  assert.equal(handlerSignal.aborted, true);
  assert.equal(registry.inFlight(), 0);
  registry.close();
});

test("resume() with onProgress: the handler's accepted reports reach the callback while it runs", async () => {
  const firstReport = deferred();
  const answers = [];
  const { registry, requestId } = await approvedRequest(async ({ input, progress }) => {
    answers.push(progress(1, 3));
    // Goes on only once the caller has heard the first report: delivery is live, not at the end.
    await firstReport.promise;
    answers.push(progress(1)); // not increasing: dropped
    answers.push(progress(2));
    answers.push(progress(3));
    return input;
  });
  const events = [];
  const outcome = await registry.resume(requestId, {
    onProgress: (event) => {
      events.push(event);
      if (event.done === 1) firstReport.resolve();
    },
  });
  assert.deepEqual(outcome, { status: "ok", output: { n: 7 } });
  assert.deepEqual(answers, [true, false, true, true]);
  assert.deepEqual(events, [
    { done: 1, total: 3 },
    { done: 2, total: 3 },
    { done: 3, total: 3 },
  ]);
  registry.close();
});

test("a resume cancelled before its consume is audited CANCELLED by the core, and consumes nothing", async () => {
  const records = [];
  const registry = await createCapabilityRegistry(
    {
      refund: base
        .meta({ agent: agent({ sideEffect: "write", risk: "high", approval: { required: true } }) })
        .handler(async () => "refunded"),
    },
    { audit: (r) => records.push(r) },
  );
  const outcome = await registry.invoke("refund", {}, frame);
  await registry.approvals.approve(outcome.request.id, { approver: "manager-1" });
  records.length = 0;
  const controller = new AbortController();
  controller.abort();
  const error = await registry.resume(outcome.request.id, { signal: controller.signal }).catch((e) => e);
  assert.equal(error.code, "CANCELLED");
  assert.deepEqual(
    records.map((r) => [r.event, r.outcome, r.resumed]),
    [["finished", "CANCELLED", true]],
  );
  assert.equal((await registry.approvals.get(outcome.request.id)).status, "approved");
  registry.close();
});

test("a policy decision with a field of the wrong type, or an expiry the core refuses, is a failed policy: denied, audited, nothing stored", async () => {
  const answers = [
    { decision: "requireApproval", approvalType: "manager", expiresInMs: "soon" },
    { decision: "requireApproval", approvalType: 7 },
    { decision: "deny", reason: ["not", "text"] },
    { decision: "requireApproval", expiresInMs: 0 },
    { decision: "requireApproval", expiresInMs: -5 },
    { decision: "requireApproval", expiresInMs: Number.NaN },
    { decision: "requireApproval", expiresInMs: 1e308 },
    { decision: "constructor" },
    { decision: "toString" },
  ];
  for (const answer of answers) {
    const records = [];
    let ran = 0;
    const registry = await createCapabilityRegistry(
      {
        pay: base
          .meta({
            agent: agent({ sideEffect: "write", risk: "high", policies: [{ name: "gate", evaluate: () => answer }] }),
          })
          .handler(async () => {
            ran++;
            return "paid";
          }),
      },
      { audit: (r) => records.push(r) },
    );
    const e = await registry.invoke("pay", {}, frame).catch((x) => x);
    assert.equal(e.code, "POLICY_DENIED", JSON.stringify(answer));
    const finished = records.filter((r) => r.event === "finished");
    assert.equal(finished.at(-1).policies[0].failed, true, JSON.stringify(answer));
    assert.equal(ran, 0);
    assert.deepEqual(await registry.approvals.list({}), []);
    registry.close();
  }
});

test("operators see what application code threw through the logger; the caller never does", async () => {
  const logged = [];
  const logger = { warn: (message, error) => logged.push({ message, error }) };
  const secret = "postgres://app:hunter2@db";
  const registry = await createCapabilityRegistry(
    {
      boom: base.meta({ agent: agent() }).handler(async () => {
        throw new TypeError(`cannot reach ${secret}`);
      }),
      gated: base
        .meta({
          agent: agent({
            policies: [
              {
                name: "crashy",
                evaluate: () => {
                  throw new RangeError(`policy saw ${secret}`);
                },
              },
            ],
          }),
        })
        .handler(async () => "never"),
    },
    { logger },
  );
  const e = await registry.invoke("boom", {}, frame).catch((x) => x);
  assert.equal(e.code, "EXECUTION_FAILED");
  assert.ok(!JSON.stringify(e.toJSON()).includes("hunter2"));
  const p = await registry.invoke("gated", {}, frame).catch((x) => x);
  assert.equal(p.code, "POLICY_DENIED");
  assert.ok(!JSON.stringify(p.toJSON()).includes("hunter2"));
  assert.equal(logged.length, 2);
  assert.match(logged[0].message, /the handler of capability "boom" failed/);
  assert.ok(
    logged[0].error instanceof TypeError && logged[0].error.message.includes("hunter2"),
    "the real error, for the operator",
  );
  assert.match(logged[1].message, /a policy \(capability #0\) of capability "gated" failed/);
  assert.ok(logged[1].error instanceof RangeError);
  // A CapabilityError the app threw is the app's own answer: not logged.
  const quiet = await createCapabilityRegistry(
    {
      own: base.meta({ agent: agent() }).handler(async () => {
        throw new CapabilityError("NOT_FOUND", "no such order");
      }),
    },
    { logger },
  );
  assert.equal((await quiet.invoke("own", {}, frame).catch((x) => x)).code, "NOT_FOUND");
  assert.equal(logged.length, 2);
  // logger: false logs nothing; a bad logger is refused with the library's words.
  const silent = await createCapabilityRegistry(
    {
      boom: base.meta({ agent: agent() }).handler(async () => {
        throw new Error("x");
      }),
    },
    { logger: false },
  );
  assert.equal((await silent.invoke("boom", {}, frame).catch((x) => x)).code, "EXECUTION_FAILED");
  await assert.rejects(
    createCapabilityRegistry({}, { logger: "console" }),
    (err) => err instanceof TypeError && /options\.logger/.test(err.message),
  );
});

test("redactApprovalInput: a redactor that edits its input in place changes nothing of the host's request", async () => {
  const registry = await createCapabilityRegistry({
    pay: base
      .meta({
        agent: agent({
          sideEffect: "external",
          risk: "high",
          approval: { required: true },
          redact: {
            approvalInput: (input) => {
              input.card = "****"; // in place, as Python's deep copy and Swift's values allow
              return input;
            },
          },
        }),
      })
      .input(z.object({ card: z.string(), cents: z.number() }))
      .handler(async ({ input }) => input),
  });
  const outcome = await registry.invoke("pay", { card: "4111", cents: 5 }, frame);
  assert.equal(outcome.status, "approval_required");
  assert.deepEqual(await registry.redactApprovalInput(outcome.request), { card: "****", cents: 5 });
  assert.deepEqual(outcome.request.input, { card: "4111", cents: 5 }, "the host's request is as it was");
  assert.deepEqual(await registry.redactApprovalInput(outcome.request), { card: "****", cents: 5 });
  registry.close();
});
