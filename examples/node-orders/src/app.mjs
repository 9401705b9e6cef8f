// The orders app: ordinary oRPC procedures, four of them declared as
// capabilities an agent may call. Nothing here knows about MCP or the AI SDK.

import { os } from "@orpc/server";
import * as z from "zod";

import { abstain, agentProcedure, createCapabilityRegistry, deny } from "@orpc-agent/core";

/** The app's own data: a tiny in-memory store, passed to handlers as context. */
export function createDb() {
  const orders = new Map([
    ["o-1001", { id: "o-1001", customerId: "c-7", total: 129.9, status: "shipped", paid: true }],
    ["o-1002", { id: "o-1002", customerId: "c-7", total: 42.0, status: "pending", paid: false }],
    ["o-1003", { id: "o-1003", customerId: "c-9", total: 980.0, status: "delivered", paid: true }],
  ]);
  const customers = new Map([
    ["c-7", { id: "c-7", name: "Ada Lovelace", email: "ada@example.com", phone: "+44 20 7946 0000" }],
    ["c-9", { id: "c-9", name: "Alan Turing", email: "alan@example.com", phone: "+44 161 496 0000" }],
  ]);
  return { orders, customers, refunds: [] };
}

const base = os.$context();
const agent = agentProcedure(base);

const Order = z.object({
  id: z.string(),
  customerId: z.string(),
  total: z.number(),
  status: z.string(),
  paid: z.boolean(),
});

function findOrder(context, id) {
  const order = context.db.orders.get(id);
  if (!order) throw new Error(`no order ${id}`);
  return order;
}

export const router = {
  orders: {
    // A read: no approval, safe to retry.
    get: agent
      .meta({
        agent: {
          description: "Get one order by its id (e.g. o-1001): status, total, whether it is paid.",
          expose: { aiSdk: true, mcp: true, direct: true },
          sideEffect: "read",
          risk: "low",
          tags: ["orders"],
          adapters: { mcp: { annotations: { title: "Look up an order" } } },
        },
      })
      .input(z.object({ id: z.string().regex(/^o-\d+$/) }))
      .output(Order)
      .handler(async ({ input, context }) => findOrder(context, input.id)),

    // A write behind a static approval gate.
    refund: agent
      .meta({
        agent: {
          description: "Refund part or all of a paid order. A human approves every refund.",
          expose: { aiSdk: true, mcp: true },
          sideEffect: "write",
          risk: "high",
          tags: ["orders", "money"],
          approval: { required: true, type: "human-confirmation", expiresInMs: 600_000 },
          redact: { approvalInput: (input) => ({ ...input, note: input.note ? "[note hidden]" : undefined }) },
        },
      })
      .input(z.object({ id: z.string(), amount: z.number().positive(), note: z.string().optional() }))
      .output(z.object({ refundId: z.string(), id: z.string(), amount: z.number() }))
      .handler(async ({ input, context }) => {
        const order = findOrder(context, input.id);
        const refund = { refundId: `r-${context.db.refunds.length + 1}`, id: order.id, amount: input.amount };
        context.db.refunds.push(refund);
        return refund;
      }),

    // A destructive one behind a policy: agents may not cancel paid orders.
    cancel: agent
      .meta({
        agent: {
          description: "Cancel an unpaid order. Paid orders are cancelled by support staff, not by agents.",
          expose: { aiSdk: true, mcp: true },
          sideEffect: "destructive",
          risk: "high",
          tags: ["orders"],
          policies: [
            {
              // A host policy: it reads the app's own data (the model's input
              // says nothing about payment). A throw would deny (fail closed).
              name: "no-agent-cancel-of-paid-orders",
              evaluate: ({ input, context }) =>
                context.db.orders.get(input.id)?.paid ? deny("paid orders are cancelled by support staff") : abstain(),
            },
          ],
        },
      })
      .input(z.object({ id: z.string() }))
      .output(z.object({ id: z.string(), status: z.literal("cancelled") }))
      .handler(async ({ input, context }) => {
        const order = findOrder(context, input.id);
        order.status = "cancelled";
        return { id: order.id, status: "cancelled" };
      }),
  },

  customers: {
    // Output redacted before any agent sees it.
    get: agent
      .meta({
        agent: {
          description: "Get the customer of an order: name, and contact details masked for agents.",
          expose: { aiSdk: true, mcp: true },
          sideEffect: "read",
          risk: "medium",
          tags: ["customers", "pii"],
          redact: { output: (c) => ({ ...c, email: mask(c.email), phone: "***" }) },
        },
      })
      .input(z.object({ orderId: z.string() }))
      .output(z.object({ id: z.string(), name: z.string(), email: z.string(), phone: z.string() }))
      .handler(async ({ input, context }) => {
        const order = findOrder(context, input.orderId);
        return context.db.customers.get(order.customerId);
      }),
  },

  // Not a capability: no `agent` meta. Ordinary oRPC traffic only.
  health: base.handler(async () => ({ ok: true })),
};

function mask(email) {
  const [user, domain] = email.split("@");
  return `${user[0]}***@${domain}`;
}

/** The governed registry over the same router; the approval queue lives in SQLite. */
export function createRegistry({ sqlitePath, audit } = {}) {
  return createCapabilityRegistry(router, {
    approvalStore: sqlitePath ? { sqlite: sqlitePath } : "memory",
    ...(audit ? { audit } : {}),
  });
}
