// One instance of the orders app: the oRPC app itself (RPCHandler on /rpc),
// the agent's entry point (/agent/tools/:name) and an approval API for the
// humans' UI (/approvals…). Every instance builds the same registry on the
// same PostgreSQL store, so an approval asked on one instance can be
// decided and resumed on any other.
//
//   PORT=… INSTANCE=A DATABASE_URL=postgresql://… node server.mjs
import { createServer } from "node:http";
import { os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/node";
import * as z from "zod";

import { agentProcedure, CapabilityError, createCapabilityRegistry } from "@orpc-agent/core";

const INSTANCE = process.env.INSTANCE ?? "?";
const base = agentProcedure(os.$context());

export const router = {
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
      .input(z.object({ orderId: z.string(), amount: z.number().positive() }))
      .handler(async ({ input }) => {
        console.log(`  [instance ${INSTANCE}] refund handler runs: ${input.orderId}, ${input.amount} EUR`);
        return { refunded: input.orderId, amount: input.amount, instance: INSTANCE };
      }),
  },
};

const registry = await createCapabilityRegistry(router, {
  approvalStore: { postgres: process.env.DATABASE_URL },
  audit: { postgres: process.env.DATABASE_URL },
  approverMustDiffer: true,
});
const rpc = new RPCHandler(router);

async function body(req) {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : {};
}

function send(res, status, value) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, "http://localhost");
  const parts = url.pathname.split("/").filter(Boolean);
  try {
    if (parts[0] === "rpc") {
      const { matched } = await rpc.handle(req, res, { prefix: "/rpc", context: {} });
      if (matched) return;
    }
    // The agent's door: the actor comes from the authenticated transport
    // (a header here, for the demo).
    if (req.method === "POST" && parts[0] === "agent" && parts[1] === "tools" && parts[2]) {
      const frame = { surface: "mcp", actor: { id: req.headers["x-actor"] ?? "anonymous" } };
      return send(res, 200, await registry.invoke(parts[2], await body(req), frame));
    }
    // The approval UI's API.
    if (req.method === "GET" && parts[0] === "approvals" && parts.length === 1) {
      const q = Object.fromEntries(url.searchParams);
      if (q.limit) q.limit = Number(q.limit);
      return send(res, 200, await registry.approvals.page(q));
    }
    if (req.method === "POST" && parts[0] === "approvals" && parts.length === 3) {
      const [, id, action] = parts;
      const { approver, reason } = await body(req);
      if (action === "approve") return send(res, 200, await registry.approvals.approve(id, { approver, reason }));
      if (action === "reject") return send(res, 200, await registry.approvals.reject(id, { approver, reason }));
      if (action === "resume") return send(res, 200, await registry.resume(id));
    }
    if (req.method === "GET" && parts[0] === "audit") {
      await registry.auditSink.flush();
      return send(res, 200, registry.auditSink.stats());
    }
    send(res, 404, { error: "not found" });
  } catch (e) {
    send(res, e instanceof CapabilityError ? 409 : 500, {
      error: e instanceof CapabilityError ? e.toJSON() : String(e),
    });
  }
});

server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  console.log(`READY ${server.address().port}`);
});
// Stops by itself: the demo driver sends SIGTERM; an orphan exits after a minute.
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
setTimeout(stop, 60_000).unref();
