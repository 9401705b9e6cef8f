// The app: its own oRPC routes, its own authentication (a bearer token →
// user, as an oRPC middleware), and an agent gateway mounted at `agent`.
// Two capabilities: `orders.get` (discoverable) and `orders.refund`
// (contextual: a UI presents it bound to the order on screen; it needs a
// manager's approval).

import { createServer } from "node:http";

import { ORPCError, os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/node";
import * as z from "zod";

import { agentProcedure, createAgentGateway, createCapabilityRegistry } from "@orpc-agent/core";

const USERS = {
  "token-alice": { id: "alice", roles: ["support"] },
  "token-bob": { id: "bob", roles: ["support", "manager"] },
};

export async function startApp({ log = () => {} } = {}) {
  const base = agentProcedure(os.$context());
  const orders = {
    get: base
      .meta({
        agent: { description: "Get one order by id.", expose: { aiSdk: true }, sideEffect: "read", risk: "low" },
      })
      .input(z.object({ id: z.string() }))
      .handler(async ({ input }) => ({ id: input.id, status: "shipped", total: 120 })),
    refund: base
      .meta({
        agent: {
          description: "Refund part of an order.",
          expose: { aiSdk: true },
          sideEffect: "write",
          risk: "high",
          discovery: "contextual",
          approval: { required: true, type: "manager" },
        },
      })
      .input(z.object({ id: z.string(), amount: z.number().positive() }))
      .handler(async ({ input, progress }) => {
        progress(1, 2); // e.g. payment provider called
        progress(2); // ledger written
        return { refunded: input.amount, id: input.id };
      }),
  };
  const registry = await createCapabilityRegistry(
    { orders },
    {
      approvalStore: "memory",
      audit: (r) =>
        r.event === "finished" &&
        log(
          `  audit: ${r.capabilityId} ${r.outcome} actor=${r.actorId} surface=${r.surface} traceparent=${r.traceparent ?? "-"}`,
        ),
    },
  );

  const authed = os.$context().use(({ context, next }) => {
    const user = USERS[(context.headers.authorization ?? "").replace(/^Bearer /, "")];
    if (!user) throw new ORPCError("UNAUTHORIZED", { status: 401 });
    return next({ context: { user } });
  });
  const router = {
    health: os.handler(() => ({ ok: true })),
    agent: authed.router(
      createAgentGateway(registry, {
        surface: "aiSdk",
        actor: (context) => context.user,
        canDecide: (actor) => actor.roles.includes("manager"),
      }),
    ),
  };
  const handler = new RPCHandler(router);
  const server = createServer(async (req, res) => {
    const { matched } = await handler.handle(req, res, { prefix: "/rpc", context: { headers: req.headers } });
    if (!matched) res.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  // Stops by itself even if the demo fails.
  const stopTimer = setTimeout(() => server.close(), 30_000).unref();
  const url = `http://127.0.0.1:${server.address().port}/rpc/agent`;
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        clearTimeout(stopTimer);
        server.closeAllConnections();
        server.close(() => {
          registry.close();
          resolve();
        });
      }),
  };
}
