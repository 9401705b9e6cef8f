// Bad arguments to the public API fail in the library's own words ("Nothing
// run twice, nothing leaked", item 14): a `TypeError` naming the argument
// and what it should be — never napi's "Failed to convert JavaScript value
// … into rust type …", never a JavaScript "Cannot read properties of …" —
// and the natural call works (an approver given as an actor `{id}` is that
// id). Every public function of the registry (`registry.ts`,
// `create-registry.ts`, `approvals.ts`) and of `stores.ts` is passed wrong
// types here.
import assert from "node:assert/strict";
import { test } from "node:test";
import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry, inputHash, PostgresAuditSink } from "@orpc-agent/core";

const base = agentProcedure(os.$context());
const frame = { surface: "direct", actor: { id: "agent-1" } };

async function gatedRegistry() {
  const registry = await createCapabilityRegistry({
    refund: base
      .meta({
        agent: {
          description: "Refund.",
          expose: { direct: true },
          sideEffect: "write",
          risk: "high",
          approval: { required: true },
        },
      })
      .input(z.object({ n: z.number() }))
      .handler(async ({ input }) => input),
  });
  const pending = async () => (await registry.invoke("refund", { n: 1 }, frame)).request.id;
  return { registry, pending };
}

/** `f` fails (throws or rejects) with a TypeError whose message matches `argument` and is the library's. */
async function refuses(label, f, argument) {
  let error;
  try {
    await f();
  } catch (e) {
    error = e;
  }
  assert.ok(error !== undefined, `${label}: expected a TypeError, the call succeeded`);
  assert.ok(
    error instanceof TypeError,
    `${label}: expected a TypeError, got ${error?.name} ${error?.code ?? ""}: ${error?.message}`,
  );
  assert.match(error.message, argument, `${label}: the message names the argument`);
  for (const foreign of [
    /Failed to convert/,
    /rust type/,
    /Cannot read propert/,
    /is not a function/,
    /native call failed/,
  ]) {
    assert.doesNotMatch(error.message, foreign, `${label}: ${error.message}`);
  }
  return error;
}

test("approvals.approve/reject take an approver as an id or as an actor {id}", async () => {
  const { registry, pending } = await gatedRegistry();
  const a = await pending();
  const approved = await registry.approvals.approve(a, { approver: { id: "x" } });
  assert.equal(approved.status, "approved");
  assert.equal(approved.decidedBy, "x");
  const b = await pending();
  const rejected = await registry.approvals.reject(b, { approver: { id: "ops-2", roles: ["manager"] }, reason: "no" });
  assert.equal(rejected.status, "rejected");
  assert.equal(rejected.decidedBy, "ops-2");
  const c = await pending();
  assert.equal((await registry.approvals.approve(c, { approver: "ops-3" })).decidedBy, "ops-3");
  assert.equal(
    (await registry.approvals.approve(await pending(), { approver: null })).decidedBy,
    undefined,
    "null: no approver",
  );
  registry.close();
});

test("approvals.approve/reject refuse wrong types naming the argument; nothing is decided", async () => {
  const { registry, pending } = await gatedRegistry();
  const id = await pending();
  for (const decide of ["approve", "reject"]) {
    const fn = (...args) => registry.approvals[decide](...args);
    await refuses(`${decide} approver number`, () => fn(id, { approver: 7 }), /approver/);
    await refuses(`${decide} approver actor without id`, () => fn(id, { approver: { roles: ["x"] } }), /approver/);
    await refuses(`${decide} approver actor with a numeric id`, () => fn(id, { approver: { id: 7 } }), /approver/);
    await refuses(`${decide} reason number`, () => fn(id, { reason: 5 }), /reason/);
    await refuses(`${decide} id number`, () => fn(5), /id/);
    await refuses(`${decide} id missing`, () => fn(), /id/);
    await refuses(`${decide} options string`, () => fn(id, "ops"), /options/);
    await refuses(`${decide} unknown option`, () => fn(id, { approvedBy: "ops" }), /approvedBy/);
  }
  assert.equal((await registry.approvals.get(id)).status, "pending", "no bad call decided anything");
  registry.close();
});

test("approvals.get/list/page refuse wrong types naming the argument", async () => {
  const { registry, pending } = await gatedRegistry();
  await pending();
  await refuses("get number", () => registry.approvals.get(5), /id/);
  await refuses("get missing", () => registry.approvals.get(), /id/);
  for (const read of ["list", "page"]) {
    const fn = (filter) => registry.approvals[read](filter);
    await refuses(`${read} string`, () => fn("x"), /filter/);
    // A wrong type used to be ignored: `actorId: 5` listed every actor's requests.
    await refuses(`${read} actorId number`, () => fn({ actorId: 5 }), /actorId/);
    await refuses(`${read} capabilityId number`, () => fn({ capabilityId: 5 }), /capabilityId/);
    await refuses(`${read} cursor number`, () => fn({ cursor: 5 }), /cursor/);
    await refuses(`${read} status number`, () => fn({ status: 5 }), /status/);
    await refuses(`${read} limit string`, () => fn({ limit: "5" }), /limit/);
    await refuses(`${read} limit negative`, () => fn({ limit: -1 }), /limit/);
    await refuses(`${read} limit fraction`, () => fn({ limit: 2.5 }), /limit/);
    // A misspelt key used to be ignored too (every actor's requests again).
    await refuses(`${read} unknown key`, () => fn({ actorID: "u" }), /actorID/);
  }
  assert.equal((await registry.approvals.list(null)).length, 1, "null is no filter");
  assert.equal((await registry.approvals.page({ actorId: "agent-1", limit: 0 })).requests.length, 1);
  // Any whole number, as in Python (whose 2**53 and 2.0 are accepted): the store caps the page.
  assert.equal((await registry.approvals.page({ actorId: "agent-1", limit: 2 ** 53 })).requests.length, 1);
  assert.equal((await registry.approvals.list({ limit: 2 ** 64 })).length, 1);
  registry.close();
});

test("invoke/resume refuse wrong types naming the argument (rejections, never synchronous throws)", async () => {
  const { registry, pending } = await gatedRegistry();
  const id = await pending();
  await registry.approvals.approve(id, { approver: "ops" });
  const rejectsWith = (label, call, argument) => {
    let promise;
    try {
      promise = call();
    } catch (e) {
      assert.fail(`${label}: threw synchronously: ${e}`);
    }
    return refuses(label, () => promise, argument);
  };
  await rejectsWith("invoke name number", () => registry.invoke(5, {}, frame), /idOrToolName/);
  await rejectsWith(
    "invoke signal string",
    () => registry.invoke("refund", { n: 1 }, { ...frame, signal: "x" }),
    /signal/,
  );
  await rejectsWith(
    "invoke onProgress number",
    () => registry.invoke("refund", { n: 1 }, { ...frame, onProgress: 5 }),
    /onProgress/,
  );
  // A misspelt frame field is refused, never ignored (ignored, `actorId`
  // would make the call anonymous), as Python's Frame refuses it.
  for (const misspelt of [{ actorId: "agent-1" }, { request_id: "r-1" }, { sessionID: "s" }, { actorId: undefined }]) {
    const key = Object.keys(misspelt)[0];
    await rejectsWith(
      `invoke frame field ${key}`,
      () => registry.invoke("refund", { n: 1 }, { surface: "direct", ...misspelt }),
      new RegExp(`frame has no field \`${key}\``),
    );
  }
  assert.deepEqual(
    (await registry.approvals.list({ status: "pending" })).length,
    0,
    "no misspelt frame made a request",
  );
  // Every field a frame has is taken (the check lists them in a switch).
  const every = {
    surface: "direct",
    actor: { id: "agent-1" },
    context: {},
    trace: undefined,
    requestId: "r-1",
    agentId: "a-1",
    sessionId: "s-1",
    signal: new AbortController().signal,
    onProgress: () => {},
  };
  assert.equal((await registry.invoke("refund", { n: 1 }, every)).status, "approval_required");
  await rejectsWith("resume id number", () => registry.resume(5), /requestId/);
  await rejectsWith("resume options string", () => registry.resume(id, "x"), /options/);
  await rejectsWith("resume signal string", () => registry.resume(id, { signal: "x" }), /signal/);
  await rejectsWith("resume onProgress string", () => registry.resume(id, { onProgress: "x" }), /onProgress/);
  await rejectsWith("resume asRequester string", () => registry.resume(id, { asRequester: "agent-1" }), /asRequester/);
  await rejectsWith(
    "resume asRequester without actor",
    () => registry.resume(id, { asRequester: { surface: "direct" } }),
    /asRequester/,
  );
  await rejectsWith("resume throughTool number", () => registry.resume(id, { throughTool: 5 }), /throughTool/);
  // A misspelt limit is refused, never ignored (ignored, the resume would
  // be trusted: any request, for anyone).
  for (const misspelt of [
    { asrequester: { surface: "mcp", actor: { id: "agent-1" } } },
    { as_requester: true },
    { through_tool: "orders.cancel" },
    { asRequester: { surface: "mcp", actor: { id: "agent-1" } }, throughtool: "orders.cancel" },
  ]) {
    const key = Object.keys(misspelt).at(-1);
    await rejectsWith(`resume option ${key}`, () => registry.resume(id, misspelt), new RegExp(`no option \`${key}\``));
  }
  assert.equal((await registry.approvals.get(id)).status, "approved", "no bad resume consumed the request");
  assert.deepEqual(await registry.resume(id, null), { status: "ok", output: { n: 1 } }, "null options are none");
  registry.close();
});

test("descriptors, redactApprovalInput, inputHash, createCapabilityRegistry and the audit sink refuse wrong types", async () => {
  const { registry } = await gatedRegistry();
  await refuses("descriptors without options", () => registry.descriptors(), /surface/);
  await refuses("descriptors surface number", () => registry.descriptors({ surface: 1 }), /surface/);
  await refuses("redactApprovalInput null", () => registry.redactApprovalInput(null), /request/);
  await refuses("redactApprovalInput string", () => registry.redactApprovalInput("apr_x"), /request/);
  await refuses("inputHash capability number", () => inputHash(5, {}), /capabilityId/);
  await refuses("createCapabilityRegistry options string", () => createCapabilityRegistry({}, "x"), /options/);
  await refuses("createCapabilityRegistry router number", () => createCapabilityRegistry(5), /router/);
  await refuses("audit sink without a URL", () => createCapabilityRegistry({}, { audit: { postgres: 5 } }), /postgres/);
  await refuses("PostgresAuditSink.open without a URL", () => PostgresAuditSink.open({ url: 5 }), /url/);
  assert.equal(registry.descriptors({ surface: "direct" }).length, 1);
  registry.close();
});
