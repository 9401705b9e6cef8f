// Audit records cross as rows (the core's `AuditRow`) and the façade builds
// the objects (src/audit.ts). These tests hold the fast, fixed-shape build
// to the core's own field list, key for key and in order.
import assert from "node:assert/strict";
import { test } from "node:test";
import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry } from "@orpc-agent/core";
import { CORE, ROW_MATCHES_FAST_PATH, auditRecordByFields, auditRecordFromRow } from "../dist/audit.js";

const omitted = new Set(CORE.omittedWhenAbsent);
const slow = (row) => auditRecordByFields(row, CORE.fields, omitted);

test("the core's rows are the ones the fast path was written for", () => {
  assert.equal(ROW_MATCHES_FAST_PATH, true);
  assert.equal(CORE.fields.length, 20);
});

test("the fast build equals the build from the core's field list, keys in the same order", () => {
  const base = [
    "finished",
    "orders.refund",
    "orders_refund",
    "mcp",
    "alice",
    false,
    [],
    null,
    null,
    1,
    1700000000000,
    3,
    "ok",
    14,
    null,
    null,
    "r",
    "a",
    "s",
    null,
  ];
  const variants = [];
  for (const requested of [null, "orders_refund"]) {
    for (const tracestate of [null, "k=v"]) {
      for (const output of [null, [null], [{ refunded: 5 }], [[1, 2]]]) {
        const row = [...base];
        row[2] = requested;
        row[15] = tracestate;
        row[19] = output;
        variants.push(row);
      }
    }
  }
  for (const row of variants) {
    const fast = auditRecordFromRow(row);
    assert.equal(JSON.stringify(fast), JSON.stringify(slow(row)), JSON.stringify(row));
  }
  // A null output is a value, kept; no output is no key.
  assert.equal("output" in auditRecordFromRow(Object.assign([...base], { 19: [null] })), true);
  assert.equal("output" in auditRecordFromRow(base), false);
  assert.equal("requested" in auditRecordFromRow(Object.assign([...base], { 2: null })), false);
});

test("records from real calls carry the core's keys in the core's order", async () => {
  const base = agentProcedure(os.$context());
  const refund = base
    .meta({
      agent: {
        description: "Refund.",
        expose: { direct: true, mcp: true },
        sideEffect: "write",
        risk: "high",
        approval: { required: true },
        redact: { output: (output) => ({ ...output, card: "[redacted]" }) },
      },
    })
    .input(z.object({ id: z.string() }))
    .output(z.object({ id: z.string(), card: z.string() }))
    .handler(async ({ input }) => ({ id: input.id, card: "4111 1111 1111 1111" }));
  const records = [];
  const registry = await createCapabilityRegistry(
    { orders: { refund } },
    {
      audit: { subscriber: (r) => records.push(r), payloads: true },
      policies: [{ name: "p", evaluate: () => ({ decision: "allow" }) }],
    },
  );
  const trace = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "k=v" };
  const gated = await registry.invoke(
    "orders.refund",
    { id: "1" },
    { surface: "mcp", actor: { id: "u" }, trace, requestId: "r1" },
  );
  assert.equal(gated.status, "approval_required");
  await registry.approvals.approve(gated.request.id, { approver: "m" });
  const resumed = await registry.resume(gated.request.id, { requestId: "r2" });
  assert.equal(resumed.status, "ok");

  assert.ok(records.length >= 3);
  for (const record of records) {
    const expectedOrder = CORE.fields.filter((k) => k in record);
    assert.deepEqual(Object.keys(record), expectedOrder);
    for (const k of CORE.fields) if (!omitted.has(k)) assert.ok(k in record, `${k} is always there`);
  }
  const first = records[0];
  assert.equal(first.requested, "orders.refund");
  assert.equal(first.tracestate, "k=v");
  assert.equal(first.policies.length, 1);
  const last = records.at(-1);
  assert.equal(last.resumed, true);
  assert.equal("requested" in last, false, "a resume names no requested capability");
  assert.deepEqual(last.output, { id: "1", card: "[redacted]" }, "the redacted output, with payloads");
  assert.ok(!JSON.stringify(records).includes("4111"), "never the raw output");
});
