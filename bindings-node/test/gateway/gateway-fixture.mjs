// An app with its own oRPC routes and an agent gateway mounted next to them,
// served by `@orpc/server/node`'s RPCHandler on node:http at 127.0.0.1.
// Authentication is the app's: an oRPC middleware reads `authorization:
// Bearer <user>` and puts the user in the context; the gateway takes its
// actor from there. Imported by the gateway tests (defines no test).

import { createServer } from "node:http";

import { ORPCError, os } from "@orpc/server";
import { RPCHandler } from "@orpc/server/node";
import * as z from "zod";

import { agentProcedure, createAgentGateway, createCapabilityRegistry } from "@orpc-agent/core";

export const USERS = {
  alice: { id: "alice", roles: ["support"] },
  bob: { id: "bob", roles: ["support", "manager"] },
};

/** Builds the app, starts it on an ephemeral loopback port. */
export async function startGatewayApp({ gatewayOptions = {}, registryOptions = {} } = {}) {
  const calls = [];
  const audit = [];
  const base = agentProcedure(os.$context());
  const router = {
    orders: {
      get: base
        .meta({
          agent: {
            description: "Get one order by id.",
            expose: { aiSdk: true, direct: true },
            sideEffect: "read",
            risk: "low",
          },
        })
        .input(z.object({ id: z.string().min(1) }))
        .handler(async ({ input, context }) => {
          calls.push({ tool: "get", input, tenant: context.tenant });
          return { id: input.id, status: "shipped" };
        }),
      refund: base
        .meta({
          agent: {
            description: "Refund an order. Needs a manager's approval.",
            expose: { aiSdk: true, direct: true },
            sideEffect: "write",
            risk: "high",
            discovery: "contextual",
            approval: { required: true, type: "manager" },
          },
        })
        .input(z.object({ id: z.string(), amount: z.number().positive() }))
        .handler(async ({ input, progress }) => {
          calls.push({ tool: "refund", input });
          progress(1, 2);
          progress(2);
          return { refunded: input.amount, id: input.id };
        }),
      export: base
        .meta({
          agent: {
            description: "Export an order's history.",
            expose: { aiSdk: true },
            sideEffect: "read",
            risk: "low",
          },
        })
        .input(z.object({ id: z.string() }))
        .handler(async ({ input, progress }) => {
          const answers = [];
          for (const [done, total] of [[1, 3], [2], [2], [3]]) {
            answers.push(progress(done, total));
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
          return { id: input.id, answers };
        }),
      purge: base
        .meta({
          agent: {
            description: "Delete an order for good.",
            expose: { direct: true },
            sideEffect: "destructive",
            risk: "critical",
          },
        })
        .input(z.object({ id: z.string() }))
        .handler(async ({ input }) => {
          calls.push({ tool: "purge", input });
          return { purged: input.id };
        }),
    },
  };
  const registry = await createCapabilityRegistry(router, {
    approvalStore: "memory",
    audit: (record) => audit.push(record),
    ...registryOptions,
  });

  // The app's own authentication, as an oRPC middleware.
  const authed = os.$context().use(({ context, next }) => {
    const auth = context.headers?.authorization ?? "";
    const user = USERS[auth.replace(/^Bearer /, "")];
    if (user === undefined) throw new ORPCError("UNAUTHORIZED", { status: 401 });
    return next({ context: { user, tenant: "t1" } });
  });
  const gateway = createAgentGateway(registry, {
    surface: "aiSdk",
    actor: (context) => context.user,
    canDecide: (actor) => actor.roles?.includes("manager") === true,
    ...gatewayOptions,
  });
  const appRouter = {
    app: { ping: os.handler(() => "pong") },
    // Mounted raw (the gateway's own `actor` check refuses the unauthenticated)…
    agent: gateway,
    // …and behind the app's middleware.
    authedAgent: authed.router(gateway),
  };

  const handler = new RPCHandler(appRouter);
  const server = createServer(async (req, res) => {
    const auth = req.headers.authorization ?? "";
    const user = USERS[auth.replace(/^Bearer /, "")];
    const { matched } = await handler.handle(req, res, {
      prefix: "/rpc",
      context: { headers: req.headers, ...(user ? { user, tenant: "t1" } : {}) },
    });
    if (!matched) {
      res.statusCode = 404;
      res.end("not found");
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  const origin = `http://127.0.0.1:${port}`;
  return {
    registry,
    router,
    calls,
    audit,
    origin,
    /** The URL of the gateway mount. */
    url: (mount = "agent") => `${origin}/rpc/${mount}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(resolve);
        registry.close();
      }),
  };
}

export const bearer = (user) => ({ authorization: `Bearer ${user}` });
