// Fault injection through the Node binding (issue 10, item 4): a handler
// that never settles and ignores its abort signal, an audit subscriber that
// throws or blocks, a host policy that throws, rejects or never answers, an
// SQLite store on a path that cannot be written. Each ends in a typed error
// or the degradation docs/decisions.md ("Hardening") documents, with no
// handler run twice and no late effect.

import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, CapabilityError, createCapabilityRegistry } from "@orpc-agent/core";

const base = agentProcedure(os.$context());
const FRAME = { surface: "direct", actor: { id: "a1" } };
const meta = (extra = {}) => ({
  agent: { description: "x", expose: { direct: true }, sideEffect: "read", risk: "low", ...extra },
});

async function rejection(p) {
  return p.then(
    (v) => assert.fail(`expected a rejection, got ${JSON.stringify(v)}`),
    (e) => e,
  );
}

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

describe("a handler that never settles and ignores its abort signal", () => {
  it("is TIMEOUT at its deadline; nothing is left in flight and no timer stays armed", async () => {
    let runs = 0;
    let aborted = false;
    const registry = await createCapabilityRegistry({
      // A deadline long enough that a loaded machine still starts the
      // handler before it (the core never starts one at its deadline).
      hang: base.meta(meta({ timeoutMs: 500, sideEffect: "write" })).handler(({ signal }) => {
        runs++;
        signal.addEventListener("abort", () => (aborted = true)); // and ignores it
        return new Promise(() => {});
      }),
    });
    const before = timers();
    const t0 = performance.now();
    const e = await rejection(registry.invoke("hang", {}, FRAME));
    const took = performance.now() - t0;
    assert.ok(e instanceof CapabilityError);
    assert.equal(e.code, "TIMEOUT");
    assert.ok(took >= 495 && took < 10_000, `took ${took} ms`);
    assert.equal(aborted, true, "the handler's signal was aborted at the deadline");
    assert.equal(runs, 1, "the handler ran once");
    assert.equal(registry.inFlight(), 0);
    await sleep(5);
    assert.equal(timers(), before, "the deadline timer was cleared");
  });

  it("a late result after the deadline has no effect: no output, no second audit record, no retry", async () => {
    const audit = [];
    let runs = 0;
    let lateResolved = false;
    // The handler finishes when the test says, after the call returned (no
    // race of real-time sleeps), and ignores its signal.
    let release;
    const released = new Promise((resolve) => (release = resolve));
    let finished;
    const handlerDone = new Promise((resolve) => (finished = resolve));
    const registry = await createCapabilityRegistry(
      {
        late: base.meta(meta({ timeoutMs: 300, idempotent: true, retry: { maxAttempts: 1 } })).handler(async () => {
          runs++;
          await released;
          lateResolved = true;
          finished();
          return { secret: "late value" };
        }),
      },
      { audit: { subscriber: (r) => audit.push(r), payloads: true } },
    );
    const e = await rejection(registry.invoke("late", {}, FRAME));
    assert.equal(e.code, "TIMEOUT");
    assert.equal(lateResolved, false, "the caller did not wait for the handler");
    const records = audit.length;
    release();
    await handlerDone;
    await sleep(5); // the late result's settling, had it any effect
    assert.equal(lateResolved, true);
    assert.equal(audit.length, records, "nothing was audited after the outcome");
    assert.ok(!JSON.stringify(audit).includes("late value"));
    assert.equal(runs, 1);
    assert.equal(registry.inFlight(), 0);
  });
});

describe("an audit subscriber that fails", () => {
  it("throwing: the outcome stands and later calls still work", async () => {
    let runs = 0;
    const registry = await createCapabilityRegistry(
      { ok: base.meta(meta()).handler(async () => ({ n: ++runs })) },
      {
        audit: () => {
          throw new Error("audit backend down");
        },
      },
    );
    assert.deepEqual(await registry.invoke("ok", {}, FRAME), { status: "ok", output: { n: 1 } });
    assert.deepEqual(await registry.invoke("ok", {}, FRAME), { status: "ok", output: { n: 2 } });
    await assert.rejects(registry.invoke("nope", {}, FRAME), { code: "NOT_FOUND" });
    assert.equal(registry.inFlight(), 0);
  });

  it("returning a promise that never settles: not awaited, the call completes", async () => {
    const registry = await createCapabilityRegistry(
      { ok: base.meta(meta()).handler(async () => "done") },
      { audit: () => new Promise(() => {}) },
    );
    assert.deepEqual(await registry.invoke("ok", {}, FRAME), { status: "ok", output: "done" });
  });

  it("blocking synchronously: delays the call and spends its deadline; the handler is not started late", async () => {
    // Documented degradation: subscribers are synchronous; one that blocks the
    // event loop past the deadline makes the call TIMEOUT before the handler runs.
    let runs = 0;
    const block = (ms) => {
      const end = Date.now() + ms;
      while (Date.now() < end);
    };
    const registry = await createCapabilityRegistry(
      { ok: base.meta(meta({ timeoutMs: 20 })).handler(async () => ++runs) },
      { audit: (r) => r.event === "started" && block(60) },
    );
    const e = await rejection(registry.invoke("ok", {}, FRAME));
    assert.equal(e.code, "TIMEOUT");
    assert.equal(runs, 0, "no handler started past its deadline");
  });
});

describe("a host policy that fails", () => {
  const capWith = (policy, timeoutMs = 100) => {
    const calls = [];
    const router = {
      act: base
        .meta(meta({ sideEffect: "write", timeoutMs, policies: [policy] }))
        .input(z.object({ v: z.string() }))
        .handler(async ({ input }) => {
          calls.push(input);
          return "ran";
        }),
    };
    return { router, calls };
  };

  for (const [name, policy] of [
    [
      "throws",
      () => {
        throw new Error("policy engine crashed");
      },
    ],
    [
      "rejects",
      async () => {
        throw new Error("policy engine unreachable");
      },
    ],
    ["never answers", () => new Promise(() => {})],
    ["answers nonsense", () => ({ decision: "maybe" })],
    [
      "as {name, evaluate} throws",
      {
        name: "remote",
        evaluate: () => {
          throw new TypeError("x is undefined");
        },
      },
    ],
  ]) {
    it(`${name}: POLICY_DENIED, the handler does not run`, async () => {
      const audit = [];
      const { router, calls } = capWith(policy);
      const registry = await createCapabilityRegistry(router, { audit: (r) => audit.push(r) });
      const e = await rejection(registry.invoke("act", { v: "x" }, FRAME));
      assert.ok(e instanceof CapabilityError);
      assert.equal(e.code, "POLICY_DENIED", e.message);
      assert.doesNotMatch(e.message, /crashed|unreachable|undefined/, "the policy's own error stays private");
      assert.equal(calls.length, 0);
      const finished = audit.find((r) => r.event === "finished") ?? audit.at(-1);
      assert.equal(finished.policies.at(-1).failed, true, JSON.stringify(finished.policies));
      assert.equal(registry.inFlight(), 0);
    });
  }
});

describe("an SQLite approval store that cannot be written", () => {
  const approvalRouter = (calls) => ({
    pay: base.meta(meta({ sideEffect: "write", risk: "high", approval: { required: true } })).handler(async () => {
      calls.push(1);
      return "paid";
    }),
  });

  for (const [name, path] of [
    ["on a read-only file system (/proc)", "/proc/self/orpc-agent-approvals.db"],
    [
      "whose path is a directory",
      (() => {
        const d = join(mkdtempSync(join(tmpdir(), "orpc-ro-")), "approvals.db");
        mkdirSync(d);
        return d;
      })(),
    ],
    ["in a directory that does not exist", "/nonexistent-dir-orpc/approvals.db"],
  ]) {
    it(`${name}: a typed error that does not name the path`, async () => {
      const calls = [];
      const e = await createCapabilityRegistry(approvalRouter(calls), { approvalStore: { sqlite: path } }).then(
        async (registry) => rejection(registry.invoke("pay", {}, FRAME)),
        (err) => err,
      );
      assert.ok(e instanceof CapabilityError, `not typed: ${e}`);
      assert.equal(e.code, "INTERNAL", e.message);
      assert.ok(!e.message.includes(path), `the message names the path: ${e.message}`);
      assert.equal(calls.length, 0);
    });
  }
});
