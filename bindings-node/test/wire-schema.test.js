// What Node hands an application from the core — approval requests, pages,
// audit records (built here from the core's rows), what a redactor is told
// — validates against the one wire schema (`schema/wire.schema.json`,
// written from the core's lists by `cargo run -p orpc-agent-core --example
// mirrors`). The public types are held to it at compile time
// (test/types/wire.typecheck.ts).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { os } from "@orpc/server";
import Ajv2020 from "ajv/dist/2020.js";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry } from "@orpc-agent/core";

const schema = JSON.parse(readFileSync(new URL("../../schema/wire.schema.json", import.meta.url), "utf8"));
const ajv = new Ajv2020({ strict: true, allErrors: true });
ajv.addSchema(schema);
const check = (name, value) => {
  const validate = ajv.getSchema(`${schema.$id}#/$defs/${name}`);
  assert.ok(validate(value), `${name}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value)}`);
};

test("approval requests, pages, audit records and redaction info validate against the wire schema", async () => {
  const base = agentProcedure(os.$context());
  const infos = [];
  const refund = base
    .meta({
      agent: {
        description: "Refund.",
        expose: { direct: true, mcp: true },
        sideEffect: "write",
        risk: "high",
        approval: { required: true, type: "manager" },
        redact: {
          output: (output, info) => {
            infos.push(info);
            return { ...output, card: "[redacted]" };
          },
        },
        policies: [{ name: "shadowed", mode: "shadow", when: { surface: ["mcp"] }, decision: "deny" }],
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
  const frame = {
    surface: "mcp",
    actor: { id: "u", roles: ["clerk"], attributes: { team: "eu" } },
    trace: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "k=v" },
    requestId: "r1",
    sessionId: "s1",
  };
  const gated = await registry.invoke("orders.refund", { id: "1" }, frame);
  assert.equal(gated.status, "approval_required");
  check("ApprovalRequest", gated.request);
  check("ApprovalPage", await registry.approvals.page());
  const decided = await registry.approvals.approve(gated.request.id, { approver: "m", reason: "fine" });
  check("ApprovalRequest", decided);
  const resumed = await registry.resume(gated.request.id, { requestId: "r2" });
  assert.equal(resumed.status, "ok");
  check("ApprovalRequest", await registry.approvals.get(gated.request.id));
  await assert.rejects(registry.invoke("no.such", {}, frame), (e) => e.code === "NOT_FOUND");

  assert.ok(records.length >= 4, `${records.length} records`);
  for (const record of records) check("AuditRecord", record);
  assert.ok(records.some((r) => r.policies.length === 2 && r.policies[1].mode === "shadow"));
  assert.ok(
    records.some((r) => r.capabilityId === null),
    "an unresolved call's record",
  );
  assert.equal(infos.length, 1);
  const { context: _context, ...info } = infos[0];
  check("RedactionInfo", info);
});

test("the schema refuses what the core never sends", () => {
  const request = {
    id: "apr_0",
    capabilityId: "c",
    input: {},
    surface: "mcp",
    actor: { roles: [], attributes: {} },
    createdAt: 1,
    expiresAt: 2,
    status: "pending",
  };
  check("ApprovalRequest", request);
  const refused = (name, value) => assert.equal(ajv.validate(`${schema.$id}#/$defs/${name}`, value), false);
  refused("ApprovalRequest", { ...request, inputHash: "h" });
  refused("ApprovalRequest", { ...request, surface: "constructor" });
  refused("ApprovalRequest", { ...request, status: "lost" });
  const { status: _status, ...withoutStatus } = request;
  refused("ApprovalRequest", withoutStatus);
});
