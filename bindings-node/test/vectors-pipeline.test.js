// Every pipeline vector (tests/vectors/pipeline) through the public API,
// with node:test's mock timers as the controllable clock (unix ms 1 000 000
// at the start): the driver's deadline timers, sleeps, Date.now() and the
// vectors' delays all run on it, so elapsed times are exact.
import assert from "node:assert/strict";
import { mock, test } from "node:test";

import { CapabilityError, createCapabilityRegistry, RegistryValidationError } from "@orpc-agent/core";

import { loadVectors, subsetProblems, vectorOptions, vectorRouter } from "./helpers.js";

const realImmediate = setImmediate;
const flush = () => new Promise((r) => realImmediate(r));

/** Runs `promise` to completion, moving the mock clock 1 ms at a time while it waits. */
async function settle(promise) {
  let done = false;
  let value;
  let error;
  promise.then(
    (v) => {
      done = true;
      value = { ok: v };
    },
    (e) => {
      done = true;
      error = e;
    },
  );
  for (let i = 0; i < 100_000; i++) {
    await flush();
    if (done) break;
    mock.timers.tick(1);
  }
  if (!done) throw new Error("operation never finished");
  return error !== undefined ? { error } : value;
}

function approvalView(req) {
  return {
    capabilityId: req.capabilityId,
    type: req.type,
    reason: req.reason,
    expiresInMs: req.expiresAt - req.createdAt,
    surface: req.surface,
    actorId: req.actor?.id,
    input: req.input,
  };
}

function frameOf(op) {
  return { ...(op.frame ?? { surface: "mcp" }) };
}

async function runCase(c) {
  const calls = {};
  const records = [];
  const options = vectorOptions(c.options, c.hostPolicies);
  options.audit = { subscriber: (r) => records.push(r), payloads: c.auditPayloads === true };
  const build = createCapabilityRegistry(vectorRouter(c.capabilities, c.hostPolicies, calls), options);
  if (c.expectBuildError) {
    const e = await build.then(
      () => null,
      (e) => e,
    );
    assert.ok(e instanceof RegistryValidationError, "the registry must fail to build (SI-4)");
    return;
  }
  const registry = await build;
  const saved = {};
  const results = [];
  for (const [i, op] of c.operations.entries()) {
    const where = `operation ${i} (${op.op})`;
    const before = records.length;
    const t0 = Date.now();
    let outcome;
    if (op.op === "advance") {
      mock.timers.tick(op.ms);
      await flush();
      results.push(null);
      continue;
    } else if (op.op === "decide") {
      const id = saved[op.approval] ?? op.approval;
      const f = op.decision === "approve" ? registry.approvals.approve : registry.approvals.reject;
      outcome = await settle(f(id, { approver: op.approver ?? undefined, reason: op.reason }));
      if (op.expect.status === "ok") assert.ok(outcome.ok, `${where}: ${outcome.error}`);
      else assert.equal(outcome.error?.code, op.expect.code, where);
      results.push(null);
      continue;
    } else if (op.op === "approvalInput") {
      const request = await registry.approvals.get(saved[op.approval]);
      const shown = await settle(registry.redactApprovalInput(request));
      const got = "ok" in shown ? { status: "ok", output: shown.ok } : { status: "error", code: shown.error?.code };
      assert.deepEqual(got, op.expect, where);
      results.push(null);
      continue;
    } else if (op.op === "invoke") {
      const frame = frameOf(op);
      if (op.cancelAfterMs !== undefined) {
        const ac = new AbortController();
        setTimeout(() => ac.abort(), op.cancelAfterMs);
        frame.signal = ac.signal;
      }
      outcome = await settle(registry.invoke(op.capability, op.input, frame));
    } else if (op.op === "resume") {
      const id = op.approval !== undefined ? saved[op.approval] : op.approvalId;
      const f = frameOf(op);
      const o = { trace: f.trace, requestId: f.requestId, agentId: f.agentId, sessionId: f.sessionId };
      // A limited resume names the caller (`asRequester`) and, through a
      // tool, the tool (`throughTool`).
      if (op.limit !== undefined) o.asRequester = { surface: f.surface, actor: f.actor ?? {} };
      if (op.limit?.throughTool !== undefined) o.throughTool = op.limit.throughTool;
      outcome = await settle(registry.resume(id, o));
    } else {
      throw new Error(`unknown op ${op.op}`);
    }
    const elapsed = Date.now() - t0;
    // Let the audit records of this operation arrive.
    await flush();
    const opRecords = records.slice(before);
    const exp = op.expect;
    if (outcome.error !== undefined) {
      const e = outcome.error;
      assert.ok(e instanceof CapabilityError, `${where}: not a CapabilityError: ${e?.stack ?? e}`);
      assert.equal("error", exp.status, `${where}: unexpected error ${e.code}: ${e.message}`);
      assert.equal(e.code, exp.code, `${where}: ${e.message}`);
      if (exp.error) assert.deepEqual(subsetProblems(exp.error, e.toJSON()), [], where);
      results.push(e.toJSON());
    } else {
      const r = outcome.ok;
      assert.equal(r.status, exp.status, `${where}: got ${JSON.stringify(r)}`);
      if (exp.status === "ok" && "output" in exp) assert.deepEqual(r.output, exp.output, where);
      if (exp.status === "approval_required") {
        if (exp.approval) assert.deepEqual(subsetProblems(exp.approval, approvalView(r.request)), [], where);
        if (op.save) saved[op.save] = r.request.id;
      }
      results.push(null);
    }
    if (op.sameErrorAs !== undefined) assert.deepEqual(results[i], results[op.sameErrorAs], `${where}: SI-8`);
    if (op.elapsedMs !== undefined) assert.equal(elapsed, op.elapsedMs, `${where}: elapsed`);
    const finished = opRecords.filter((r) => r.event === "finished");
    if (op.auditEvents !== undefined)
      assert.deepEqual(
        opRecords.map((r) => r.event),
        op.auditEvents,
        where,
      );
    if (op.audit !== undefined) {
      assert.equal(finished.length, 1, `${where}: one finished record`);
      const { inputHash, hasFailure, ...rest } = op.audit;
      assert.deepEqual(subsetProblems(rest, finished[0]), [], `${where}: audit`);
      if (inputHash !== undefined)
        assert.equal(typeof finished[0].inputHash === "string", inputHash, `${where}: inputHash`);
      // Whether the record names a plain failure's class (which class is
      // the language's).
      if (hasFailure !== undefined) {
        const failure = finished[0].failure;
        assert.equal(typeof failure === "string" && failure !== "", hasFailure, `${where}: failure ${failure}`);
      }
    }
    for (const [id, n] of Object.entries(op.handlerCalls ?? {}))
      assert.equal(calls[id] ?? 0, n, `${where}: calls of ${id}`);
    if (op.mustNotContain !== undefined) {
      const seen = JSON.stringify(results[i]) + JSON.stringify(opRecords);
      assert.ok(!seen.includes(op.mustNotContain), `${where}: ${op.mustNotContain} leaked (SI-10)`);
    }
  }
  // Let dangling timers (a handler that ignored its signal) run out, then
  // check no invocation slot leaked.
  mock.timers.tick(10_000);
  await flush();
  assert.equal(registry.inFlight(), 0, "no invocation left in flight");
  registry.close();
}

for (const c of loadVectors("pipeline")) {
  test(`pipeline vector ${c.file}: ${c.name}`, async () => {
    mock.timers.enable({ apis: ["setTimeout", "Date"], now: 1_000_000 });
    try {
      await runCase(c);
    } finally {
      mock.timers.reset();
    }
  });
}
