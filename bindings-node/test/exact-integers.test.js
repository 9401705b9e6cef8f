// The value the approval hash binds is the value the approver sees and the
// handler gets (issue 14 item 2): integers beyond ±2^53 stay exact — as
// BigInt — through the approval-required outcome, the store's views, a
// SQLite file shared by two registries, and the resumed handler.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry, inputHash } from "@orpc-agent/core";

const base = agentProcedure(os.$context());
const BIG = 9007199254740993n; // 2^53 + 1: a double reads it as …992
const NEG = -9223372036854775808n; // -2^63
const MAX = 18446744073709551615n; // 2^64 - 1

function router(seen) {
  return {
    transfer: base
      .meta({
        agent: {
          description: "Moves units.",
          expose: { direct: true },
          sideEffect: "write",
          risk: "high",
          approval: { required: true },
        },
      })
      .input(z.object({ units: z.bigint(), floor: z.bigint(), cap: z.bigint(), note: z.string() }))
      .handler(async ({ input }) => {
        seen.push(input);
        return { ok: true };
      }),
  };
}

const input = { units: BIG, floor: NEG, cap: MAX, note: "\u0000n1" };

test("a gated BigInt input reaches the view, the outcome and the resumed handler exactly", async () => {
  const seen = [];
  const registry = await createCapabilityRegistry(router(seen));
  const r = await registry.invoke("transfer", input, { surface: "direct", actor: { id: "alice" } });
  assert.equal(r.status, "approval_required");
  assert.deepEqual(r.request.input, input);
  // The stored input hashes to the hash of the value the caller gave.
  assert.equal(inputHash("transfer", r.request.input), inputHash("transfer", input));
  const got = await registry.approvals.get(r.request.id);
  assert.deepEqual(got.input, input);
  assert.deepEqual((await registry.approvals.list({ status: "pending" }))[0].input, input);
  const decided = await registry.approvals.approve(r.request.id, { approver: "bob" });
  assert.deepEqual(decided.input, input);
  assert.deepEqual(await registry.redactApprovalInput(got), input);
  const resumed = await registry.resume(r.request.id);
  assert.equal(resumed.status, "ok");
  assert.deepEqual(seen, [input]);
  assert.equal(typeof seen[0].units, "bigint");
});

test("a request stored in SQLite by one registry resumes exactly in another", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orpc-agent-exact-"));
  try {
    const path = join(dir, "approvals.db");
    const seen = [];
    const first = await createCapabilityRegistry(router([]), { approvalStore: { sqlite: path } });
    const r = await first.invoke("transfer", input, { surface: "direct", actor: { id: "alice" } });
    await first.approvals.approve(r.request.id, { approver: "bob" });
    first.close();
    const second = await createCapabilityRegistry(router(seen), { approvalStore: { sqlite: path } });
    assert.equal((await second.resume(r.request.id)).status, "ok");
    assert.deepEqual(seen, [input]);
    second.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("values without large integers read as plain JSON, strings that start with NUL included", async () => {
  const seen = [];
  const registry = await createCapabilityRegistry({
    note: base
      .meta({
        agent: {
          description: "Notes.",
          expose: { direct: true },
          sideEffect: "write",
          risk: "low",
          approval: { required: true },
        },
      })
      .input(z.object({ n: z.number(), s: z.string() }))
      .handler(async ({ input }) => {
        seen.push(input);
        return null;
      }),
  });
  const value = { n: 9007199254740991, s: "\u0000s" };
  const r = await registry.invoke("note", value, { surface: "direct", actor: { id: "a" } });
  assert.deepEqual(r.request.input, value);
  await registry.approvals.approve(r.request.id, { approver: "b" });
  await registry.resume(r.request.id);
  assert.deepEqual(seen, [value]);
  assert.equal(typeof seen[0].n, "number");
});

// What a resumed handler gets is `parseCoreJson` of the stored JSON: a
// validated value whose JSON form reads back as something else (a Date as
// its text, a Map as an object, a small BigInt as a number) is refused where
// it is bound (the approval gate here; a policy that reads the input too),
// before any request is stored, with the core's reason (as Python refuses a
// model that does not rebuild from its JSON) — never an approval whose
// handler would get another value.
test("an input whose JSON form does not read back as the validated value is refused at the gate", async () => {
  const runs = [];
  const records = [];
  const gated = (input) =>
    base
      .meta({
        agent: {
          description: "Gated.",
          expose: { direct: true },
          sideEffect: "write",
          risk: "high",
          approval: { required: true },
        },
      })
      .input(input)
      .handler(async ({ input }) => {
        runs.push(input);
        return { ok: true };
      });
  const registry = await createCapabilityRegistry(
    {
      dated: gated(z.object({ at: z.iso.datetime().transform((s) => new Date(s)) })),
      mapped: gated(z.object({ limits: z.map(z.string(), z.number()) })),
      counted: gated(z.object({ units: z.bigint() })),
      plain: gated(z.object({ at: z.iso.datetime(), units: z.bigint() })),
    },
    { audit: { subscriber: (r) => records.push(r) } },
  );
  const frame = { surface: "direct", actor: { id: "alice" } };
  for (const [id, value] of [
    ["dated", { at: "2026-12-06T10:00:00Z" }],
    ["mapped", { limits: new Map([["eu", 5]]) }],
    ["counted", { units: 5n }],
  ]) {
    await assert.rejects(registry.invoke(id, value, frame), (e) => {
      assert.equal(e.code, "INVALID_INPUT", id);
      assert.match(e.message, /does not give the validated value back when rebuilt/, id);
      return true;
    });
    assert.equal(records.at(-1).outcome, "INVALID_INPUT", id);
  }
  assert.deepEqual(await registry.approvals.list(), []);
  assert.deepEqual(runs, []);
  // The same values in the form JSON gives back are bound, approved and run.
  const r = await registry.invoke("plain", { at: "2026-12-06T10:00:00Z", units: BIG }, frame);
  assert.equal(r.status, "approval_required");
  await registry.approvals.approve(r.request.id, { approver: "bob" });
  assert.equal((await registry.resume(r.request.id)).status, "ok");
  assert.deepEqual(runs, [{ at: "2026-12-06T10:00:00Z", units: BIG }]);
});

test("a sparse array is hashed as JSON writes it: each hole a null", () => {
  // biome-ignore lint/suspicious/noSparseArray: a hole is what this test writes
  const sparse = [1, , 3];
  assert.equal(inputHash("c", sparse), inputHash("c", [1, null, 3]));
  assert.notEqual(inputHash("c", sparse), inputHash("c", [1, 3]));
  // biome-ignore lint/suspicious/noSparseArray: a hole is what this test writes
  assert.equal(inputHash("c", [, 1]), inputHash("c", [null, 1]));
});

// What a redactor is told crosses as the core's marked text too: a BigInt
// actor attribute reaches it exactly (it used to fail the call with
// INTERNAL before it started: the frame's JSON.stringify threw on BigInt),
// and a Number stays a Number.
test("a redactor reads the actor's large integer attributes exactly", async () => {
  const infos = [];
  const registry = await createCapabilityRegistry({
    read: base
      .meta({
        agent: {
          description: "Reads.",
          expose: { direct: true },
          sideEffect: "read",
          risk: "low",
          redact: {
            output: (o, info) => {
              infos.push(info);
              return o;
            },
          },
        },
      })
      .input(z.object({}))
      .handler(async () => ({ ok: true })),
  });
  const actor = { id: "alice", roles: ["clerk"], attributes: { account: BIG, small: 7, wide: 2 ** 60 } };
  const r = await registry.invoke("read", {}, { surface: "direct", actor });
  assert.equal(r.status, "ok");
  // A BigInt comes back a BigInt; a Number (even past 2^53) a Number.
  assert.deepEqual(infos[0].actor.attributes, { account: BIG, small: 7, wide: 2 ** 60 });
  // Without a BigInt in the frame, a wide Number still comes back a Number.
  const numbers = { id: "carol", attributes: { wide: 2 ** 60 } };
  assert.equal((await registry.invoke("read", {}, { surface: "direct", actor: numbers })).status, "ok");
  assert.equal(infos[1].actor.attributes.wide, 2 ** 60);
  // A frame with no JSON form is the app's error (INTERNAL), not the caller's.
  // (Two ways back to itself: a walk that re-entered its own path would
  // take 2^depth steps before the writer's refusal.)
  const cyclic = { id: "bob", attributes: {} };
  cyclic.attributes.self = cyclic;
  cyclic.attributes.again = cyclic.attributes;
  await assert.rejects(registry.invoke("read", {}, { surface: "direct", actor: cyclic }), {
    code: "INTERNAL",
  });
  // A NaN or infinite attribute has no JSON form either: JSON.stringify
  // would send null. Refused before the call, in the words of Python's and
  // Swift's refusal; nothing runs.
  // eslint-disable-next-line no-new-wrappers -- a Number object holding NaN is refused too
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, new Number(Number.NaN)]) {
    // A BigInt next to it (JSON.stringify throws on it) changes nothing.
    const refused = { id: "dave", attributes: { account: BIG, limits: { "a/b": [1, bad] } } };
    await assert.rejects(registry.invoke("read", {}, { surface: "direct", actor: refused }), {
      code: "INVALID_INPUT",
      message: "input at /attributes/limits/a~1b/1 is NaN or infinite; only finite numbers can be hashed",
    });
  }
  assert.equal(infos.length, 2);
  // null itself is a value.
  const nulls = { id: "erin", attributes: { manager: null } };
  assert.equal((await registry.invoke("read", {}, { surface: "direct", actor: nulls })).status, "ok");
});

// The audit subscriber's record crosses as the core's marked text too: an
// audited payload with an integer past 2^53 arrives exactly.
test("an audit subscriber reads a large integer in the recorded output exactly", async () => {
  const records = [];
  const registry = await createCapabilityRegistry(
    {
      count: base
        .meta({
          agent: { description: "Counts.", expose: { direct: true }, sideEffect: "read", risk: "low" },
        })
        .input(z.object({}))
        .handler(async () => ({ total: BIG, label: "1234567890123456789" })),
    },
    { audit: { subscriber: (r) => records.push(r), payloads: true } },
  );
  const r = await registry.invoke("count", {}, { surface: "direct" });
  assert.equal(r.status, "ok");
  const finished = records.find((x) => x.event === "finished");
  assert.deepEqual(finished.output, { total: BIG, label: "1234567890123456789" });
});
