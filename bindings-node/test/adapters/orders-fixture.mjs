// A small oRPC router with capabilities of every kind the adapters present:
// a read, a write behind approval, a destructive one behind a policy, one with
// redacted output, a contextual one and one exposed only on `direct`.
// Imported by the adapter tests (run as a test file itself, it defines none).

import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry } from "@orpc-agent/core";

const Order = z.object({ id: z.string(), status: z.string(), email: z.string() });

/** Builds a fresh router, registry and call log (tests never share approval state). */
export async function ordersFixture(registryOptions = {}) {
  const calls = [];
  const audit = [];
  const signals = [];
  const base = agentProcedure(os.$context());

  const router = {
    orders: {
      get: base
        .meta({
          agent: {
            description: "Get one order by id.",
            expose: { aiSdk: true, mcp: true, direct: true },
            sideEffect: "read",
            risk: "low",
            tags: ["orders"],
            adapters: { mcp: { annotations: { title: "Get order" } } },
          },
        })
        .input(z.object({ id: z.string().min(1) }))
        .output(Order)
        .handler(async ({ input, context, signal }) => {
          calls.push({ tool: "get", input, context });
          signals.push(signal);
          if (input.id === "boom") throw new Error("db password hunter2 rejected");
          if (input.id === "slow") {
            await new Promise((resolve, reject) => {
              const timer = setTimeout(resolve, 5_000);
              signal?.addEventListener("abort", () => {
                clearTimeout(timer);
                reject(signal.reason);
              });
            });
          }
          return { id: input.id, status: "shipped", email: "ada@example.com" };
        }),
      refund: base
        .meta({
          agent: {
            description: "Refund an order. Needs a human's approval.",
            expose: { aiSdk: true, mcp: true },
            sideEffect: "write",
            risk: "high",
            approval: { required: true, type: "human-confirmation" },
          },
        })
        .input(z.object({ id: z.string(), amount: z.number().positive() }))
        .output(z.object({ refunded: z.number(), id: z.string() }))
        .handler(async ({ input }) => {
          calls.push({ tool: "refund", input });
          return { refunded: input.amount, id: input.id };
        }),
      purge: base
        .meta({
          agent: {
            description: "Delete an order for good.",
            expose: { aiSdk: true, mcp: true },
            sideEffect: "destructive",
            risk: "critical",
            policies: [{ name: "no-purge-by-agents", decision: "deny", reason: "agents may not purge orders" }],
          },
        })
        .input(z.object({ id: z.string() }))
        .handler(async ({ input }) => {
          calls.push({ tool: "purge", input });
          return { purged: input.id };
        }),
      customer: base
        .meta({
          agent: {
            description: "Look up the customer of an order; personal data is masked.",
            expose: { aiSdk: true, mcp: true },
            sideEffect: "read",
            risk: "medium",
            redact: { output: (o) => ({ ...o, email: "***", phone: "***" }) },
          },
        })
        .input(z.object({ orderId: z.string() }))
        .output(z.object({ name: z.string(), email: z.string(), phone: z.string() }))
        .handler(async ({ input }) => {
          calls.push({ tool: "customer", input });
          return { name: "Ada Lovelace", email: "ada@example.com", phone: "+44 20 7946 0000" };
        }),
      note: base
        .meta({
          agent: {
            description: "Add a note to the order the user is looking at.",
            expose: { aiSdk: true, mcp: true },
            sideEffect: "write",
            risk: "low",
            discovery: "contextual",
            policies: [{ name: "notes-ok", decision: "allow" }],
          },
        })
        .input(z.object({ id: z.string(), text: z.string() }))
        .handler(async ({ input }) => {
          calls.push({ tool: "note", input });
          return { ok: true };
        }),
      internal: base
        .meta({
          agent: { description: "Internal reindex.", expose: { direct: true }, sideEffect: "none", risk: "low" },
        })
        .handler(async () => ({ ok: true })),
    },
  };

  const registry = await createCapabilityRegistry(router, {
    approvalStore: "memory",
    audit: (record) => audit.push(record),
    ...registryOptions,
  });
  return { router, registry, calls, audit, signals };
}

/**
 * Waits until `condition()` is true, checking on every turn of the event
 * loop; fails naming `what` after `timeoutMs`. Every wait in the suites is
 * bounded, so a regression fails its test instead of hanging the run.
 */
export async function waitFor(condition, what, timeoutMs = 10_000) {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/**
 * A registry of one aiSdk read, `count`, whose output has no JSON form
 * (`output`: a BigInt by default, or a NaN, which JSON.stringify would
 * write as null), with a logger that records what operators are told:
 * `[message, the error's class]`.
 */
export async function noJsonOutputFixture(output = { n: 10n }) {
  const logged = [];
  const logger = { warn: (message, error) => logged.push([message, error?.constructor?.name]) };
  const router = {
    count: agentProcedure(os.$context())
      .meta({ agent: { description: "Count.", expose: { aiSdk: true }, sideEffect: "read", risk: "low" } })
      .handler(async () => output),
  };
  return { registry: await createCapabilityRegistry(router, { logger }), logged };
}

/** The outputs with no JSON form, and what operators are told of each (`noJsonOutputFixture`). */
export const NO_JSON_OUTPUTS = [
  [{ n: 10n }, "TypeError"],
  [{ score: Number.NaN }, "RangeError"],
].map(([output, errorClass]) => ({
  output,
  logged: [
    [
      'orpc-agent: the output\'s JSON form of capability "count" failed in an adapter; the model was only told that it failed',
      errorClass,
    ],
  ],
}));
