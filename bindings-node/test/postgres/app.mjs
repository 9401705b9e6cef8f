// One oRPC app on a PostgreSQL approval store, as every instance of a
// deployed app would build it. Imported by the PostgreSQL tests, and run as
// a process by the multi-process tests (and the cross-binding test):
//
//   node app.mjs create <actor> <orderId>   → prints the approval request
//   node app.mjs approve <id> <approver>    → prints the decided request
//   node app.mjs resume <id>                → prints the outcome or error
//   node app.mjs race <id> <n>              → n concurrent resumes; prints codes
//
// The URL is ORPC_AGENT_TEST_PG_URL (scripts/pg-test-cluster.sh sets it); the handler appends one line per run
// to $HANDLER_LOG, so a test counts executions across processes.
import { appendFileSync } from "node:fs";
import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry, CapabilityError } from "@orpc-agent/core";

export function router() {
  const base = agentProcedure(os.$context());
  return {
    orders: {
      refund: base
        .meta({
          agent: {
            description: "Refund an order. Needs a human's approval.",
            expose: { direct: true, mcp: true },
            sideEffect: "write",
            risk: "high",
            approval: { required: true, type: "human-confirmation" },
          },
        })
        .input(z.object({ id: z.string(), amount: z.number().positive() }))
        .handler(async ({ input }) => {
          if (process.env.HANDLER_LOG) appendFileSync(process.env.HANDLER_LOG, `${process.pid} ${input.id}\n`);
          return { refunded: input.id, amount: input.amount, by: process.pid };
        }),
      get: base
        .meta({ agent: { description: "Read an order.", expose: { direct: true }, sideEffect: "read", risk: "low" } })
        .input(z.object({ id: z.string() }))
        .handler(async ({ input }) => ({ id: input.id, status: "paid" })),
    },
  };
}

/** The test server's URL, without TLS (loopback); the TLS test adds its own. */
export const PG_URL = process.env.ORPC_AGENT_TEST_PG_URL && `${process.env.ORPC_AGENT_TEST_PG_URL}?sslmode=disable`;

export function registry(url = PG_URL, options = {}) {
  return createCapabilityRegistry(router(), {
    approvalStore: { postgres: { url, connectTimeoutMs: 5_000 } },
    approverMustDiffer: true,
    ...options,
  });
}

async function main([cmd, ...args]) {
  const reg = await registry();
  const out = (v) => process.stdout.write(`${JSON.stringify(v)}\n`);
  try {
    switch (cmd) {
      case "create": {
        const [actor, order] = args;
        const r = await reg.invoke(
          "orders.refund",
          { id: order, amount: 12.5 },
          { surface: "mcp", actor: { id: actor } },
        );
        out(r.request);
        break;
      }
      case "approve":
        out(await reg.approvals.approve(args[0], { approver: args[1] }));
        break;
      case "resume":
        out(await reg.resume(args[0]));
        break;
      case "race": {
        const n = Number(args[1]);
        const settled = await Promise.allSettled(Array.from({ length: n }, () => reg.resume(args[0])));
        out(settled.map((s) => (s.status === "fulfilled" ? "OK" : s.reason.code)));
        break;
      }
      default:
        throw new Error(`unknown command ${cmd}`);
    }
  } catch (e) {
    out({ error: e instanceof CapabilityError ? e.toJSON() : String(e) });
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) {
  await main(process.argv.slice(2));
}
