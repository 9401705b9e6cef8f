/**
 * The agent gateway: a registry's capabilities on one surface as an
 * ordinary oRPC router, mounted with `@orpc/server`'s fetch or node
 * handlers next to the app's own routes.
 *
 * - The **actor** comes from the app's own oRPC context (its middleware
 *   authenticated the request): `actor(context)`. No actor → `UNAUTHORIZED`
 *   and nothing else, on every procedure.
 * - The **surface** is fixed when the gateway is created, per mount; it is
 *   never read from a request body (SI-2). `direct` is refused: a model
 *   action must never bypass the surface's exposure and approvals.
 * - **Approval decisions** need the separate `canDecide(actor, request)`
 *   hook; a missing hook, a throw or anything but `true` refuses (fails
 *   closed). A requester may read and resume their own requests — made
 *   on this mount's surface by the same actor id, the core's rule
 *   (`Requester::made_on`) — and a decider may read the requests they may
 *   decide.
 * - Every stage runs in the core (`registry.invoke` / `resume`); the gateway
 *   converts transport to a frame and outcomes to responses, nothing more.
 *   The W3C trace context of the HTTP request's headers is read by the core
 *   (`act::trace::from_http_headers`) and lands in the audit record.
 */
import { ORPCError, os } from "@orpc/server";

import { GATEWAY } from "../generated/protocol.js";
import { N } from "../native.js";
import type { CapabilityRegistry } from "../registry.js";
import type { Actor, ApprovalRequest, ExposureSurface } from "../types.js";
import { gatewayCallers } from "./callers.js";
import { guard, toOrpc } from "./guard.js";
import {
  readDecideInput,
  readDescriptorsInput,
  readId,
  readInvokeInput,
  readListInput,
  readReleaseInput,
  readResumeInput,
} from "./parse.js";
import { GatewayHolds } from "./holds.js";
import { progressMetadataCbor, type ProgressEvent } from "../progress.js";
import type { HeadersLike } from "./trace-headers.js";
import type {
  GatewayStreamEvent,
  GatewayApprovalView,
  GatewayDescriptorsOutput,
  GatewayHeldOutput,
  GatewayInvokeOutput,
} from "./wire.js";

type Awaitable<T> = T | Promise<T>;

export interface AgentGatewayOptions<TContext = any, TAppContext = any> {
  /** The surface this mount serves (default `aiSdk`). `direct` is refused. */
  surface?: Exclude<ExposureSurface, "direct">;
  /** The authenticated actor of the request, from the app's oRPC context; `undefined`/`null` → UNAUTHORIZED. */
  actor: (context: TContext) => Awaitable<Actor | undefined | null>;
  /** May `actor` approve or reject `request`? Anything but `true` refuses (default: nobody may). */
  canDecide?: (actor: Actor, request: ApprovalRequest, context: TContext) => Awaitable<boolean>;
  /** The application context the procedures' middlewares and handlers get (default: the oRPC context). */
  context?: (context: TContext) => TAppContext;
  /** The request's headers, for the trace context (default: `context.headers`, `context.req.rawHeaders` or `context.request.headers`). */
  headers?: (context: TContext) => HeadersLike | undefined;
  /** Audit ids from the authenticated transport (request, agent, session); never from the body. */
  ids?: (context: TContext) => { requestId?: string; agentId?: string; sessionId?: string } | undefined;
}

/**
 * Creates the gateway router: `descriptors`, `invoke`, and `approvals.{get,
 * list, decide, resume}`. Mount it under any key of the app's router.
 */
export function createAgentGateway<TContext extends object = Record<string, unknown>, TAppContext = any>(
  registry: CapabilityRegistry<TAppContext>,
  options: AgentGatewayOptions<TContext, TAppContext>,
) {
  const surface: ExposureSurface = options.surface ?? "aiSdk";
  // Which surfaces a gateway serves is the core's rule (its names, never `direct`).
  const refusal = N.gatewaySurfaceRefusal(typeof surface === "string" ? surface : null);
  if (refusal != null) throw new TypeError(refusal);
  if (typeof options.actor !== "function") throw new TypeError("createAgentGateway needs an actor(context) option.");
  const base = os.$context<TContext>();
  const holds = new GatewayHolds();

  const { actorOf, mayDecide, frameOf, view, visible, visiblePage, outcome } = gatewayCallers(
    registry,
    options,
    surface,
  );

  return {
    /** The descriptors of this mount's surface, as JSON or (`{format: "cbor"}`) CBOR with `std:` keys. */
    descriptors: base.handler(async ({ input, context }): Promise<GatewayDescriptorsOutput> => {
      await actorOf(context);
      const { format } = readDescriptorsInput(input);
      if (format === "cbor") {
        const bytes: Uint8Array = await guard(async () => N.registryDescriptorsCbor(registry.handle, surface));
        return { format, surface, contentType: "application/cbor", data: Buffer.from(bytes).toString("base64") };
      }
      return { format: "json", surface, descriptors: await guard(async () => registry.descriptors({ surface })) };
    }),

    /** Runs a capability on this mount's surface through every stage of the core. */
    invoke: base.handler(async ({ input, context, signal }): Promise<GatewayInvokeOutput> => {
      const actor = await actorOf(context);
      const body = readInvokeInput(input);
      const frame = frameOf(context, actor, signal);
      return outcome(await guard(() => registry.invoke(body.capability, body.input, frame)), context);
    }),

    /**
     * `invoke` up to the handler (a remote tool's approval hook): a call
     * that passes every stage before it waits, held, for `release` from
     * the same caller (`{status: "held", holdId}`); any other outcome is
     * answered as `invoke` answers it. Unreleased, it ends at its deadline.
     */
    invokeHeld: base.handler(async ({ input, context }): Promise<GatewayHeldOutput> => {
      const actor = await actorOf(context);
      const body = readInvokeInput(input);
      const frame = frameOf(context, actor, undefined);
      const held = await guard(() => holds.invoke(registry, body.capability, body.input, frame, actor));
      return "holdId" in held
        ? { status: "held", holdId: held.holdId, remainingMs: held.remainingMs }
        : outcome(held.outcome, context);
    }),

    /** Runs (`run: true`) or ends unrun a call `invokeHeld` holds for this caller; its outcome. */
    release: base.handler(async ({ input, context, signal }): Promise<GatewayInvokeOutput> => {
      const actor = await actorOf(context);
      const { holdId, run } = readReleaseInput(input);
      return outcome(await guard(() => holds.release(holdId, run, actor, signal)), context);
    }),

    /**
     * `invoke` as an event stream: the handler's accepted progress reports
     * as `{type: "progress", done, total?, metadata}` events (`metadata`:
     * base64 CBOR with `std:progress`/`std:progress-total`), then one
     * `{type: "result", ...outcome}`; a capability error ends the stream.
     */
    invokeStream: base.handler(async function* ({
      input,
      context,
      signal,
    }): AsyncGenerator<GatewayStreamEvent, void, unknown> {
      const actor = await actorOf(context);
      const body = readInvokeInput(input);
      const frame = frameOf(context, actor, signal);
      const queue: ProgressEvent[] = [];
      let wake: (() => void) | undefined;
      frame.onProgress = (event) => {
        queue.push(event);
        wake?.();
      };
      let settled:
        | { ok: true; result: Awaited<ReturnType<typeof registry.invoke>> }
        | { ok: false; error: unknown }
        | undefined;
      void registry.invoke(body.capability, body.input, frame).then(
        (result) => {
          settled = { ok: true, result };
          wake?.();
        },
        (error: unknown) => {
          settled = { ok: false, error };
          wake?.();
        },
      );
      for (;;) {
        for (let event = queue.shift(); event !== undefined; event = queue.shift()) {
          yield { type: "progress", ...event, metadata: Buffer.from(progressMetadataCbor(event)).toString("base64") };
        }
        if (settled !== undefined) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      if (!settled.ok) throw toOrpc(settled.error);
      yield { type: "result", ...(await outcome(settled.result, context)) };
    }),

    approvals: {
      /** One request the caller made or may decide. */
      get: base.handler(async ({ input, context }): Promise<GatewayApprovalView> => {
        const actor = await actorOf(context);
        return view(await visible(readId(input), actor, context), context);
      }),

      /**
       * The caller's own requests on this surface, and those the caller may
       * decide: the first page of them (`limit`, else the store's page size),
       * in creation order.
       */
      list: base.handler(async ({ input, context }): Promise<GatewayApprovalView[]> => {
        const actor = await actorOf(context);
        const filter = readListInput(input);
        const shown: GatewayApprovalView[] = [];
        for (const request of await visiblePage(filter, actor, context)) shown.push(await view(request, context));
        return shown;
      }),

      /** Approves or rejects: only when `canDecide(actor, request)` is `true`. */
      decide: base.handler(async ({ input, context }): Promise<GatewayApprovalView> => {
        const actor = await actorOf(context);
        const { id, approve, reason } = readDecideInput(input);
        const request = await guard(() => registry.approvals.get(id));
        if (request === null || !(await mayDecide(actor, request, context))) {
          throw new ORPCError("FORBIDDEN", { status: 403, message: GATEWAY.mayNotDecideMessage });
        }
        const decision = {
          ...(actor.id === undefined ? {} : { approver: actor.id }),
          ...(reason === undefined ? {} : { reason }),
        };
        const decided = await guard(() =>
          approve ? registry.approvals.approve(id, decision) : registry.approvals.reject(id, decision),
        );
        return view(decided, context);
      }),

      /**
       * Runs an approved request of the caller's (single use). The core
       * resumes it only for the actor who made it, on this gateway's
       * surface (`asRequester`); anyone else gets APPROVAL_NOT_FOUND and
       * consumes nothing.
       */
      resume: base.handler(async ({ input, context, signal }): Promise<GatewayInvokeOutput> => {
        const actor = await actorOf(context);
        const { id, throughTool } = readResumeInput(input);
        const { context: ctx, signal: s, trace, requestId, agentId, sessionId } = frameOf(context, actor, signal);
        const resumed = registry.resume(id, {
          context: ctx,
          signal: s,
          trace,
          requestId,
          agentId,
          sessionId,
          asRequester: { surface, actor },
          ...(throughTool === undefined ? {} : { throughTool }),
        });
        return outcome(await guard(() => resumed), context);
      }),
    },
  };
}

/** The router type of a gateway, for `@orpc/client`'s `RouterClient`. */
export type AgentGatewayRouter = ReturnType<typeof createAgentGateway>;
