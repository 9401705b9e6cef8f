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

import { CapabilityError } from "../errors.js";
import { GATEWAY } from "../generated/protocol.js";
import { N } from "../native.js";
import type { CapabilityRegistry } from "../registry.js";
import type { Actor, ApprovalRequest, ExposureSurface, Frame, TraceContext } from "../types.js";
import { readDecideInput, readDescriptorsInput, readId, readInvokeInput, readListInput } from "./parse.js";
import { progressMetadataCbor, type ProgressEvent } from "../progress.js";
import {
  statusOf,
  type GatewayStreamEvent,
  type GatewayApprovalView,
  type GatewayDescriptorsOutput,
  type GatewayInvokeOutput,
  type GatewayListInput,
} from "./wire.js";

type Awaitable<T> = T | Promise<T>;

/** Request headers in any of the forms Node servers and fetch handlers give them. */
export type HeadersLike =
  | Headers
  | Record<string, string | string[] | undefined>
  | readonly string[] /* Node's `rawHeaders` */;

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

  async function actorOf(context: TContext): Promise<Actor> {
    let actor: Actor | undefined | null;
    try {
      actor = await options.actor(context);
    } catch {
      actor = undefined;
    }
    if (actor === undefined || actor === null || typeof actor !== "object") {
      throw new ORPCError("UNAUTHORIZED", { status: 401, message: "Authentication required." });
    }
    return actor;
  }

  async function mayDecide(actor: Actor, request: ApprovalRequest, context: TContext): Promise<boolean> {
    if (options.canDecide === undefined) return false;
    try {
      return (await options.canDecide(actor, request, context)) === true;
    } catch {
      return false;
    }
  }

  const appContext = (context: TContext): TAppContext =>
    options.context === undefined ? (context as unknown as TAppContext) : options.context(context);

  function frameOf(context: TContext, actor: Actor, signal: AbortSignal | undefined): Frame<TAppContext> {
    const frame: Frame<TAppContext> = { surface, actor, context: appContext(context) };
    if (signal !== undefined) frame.signal = signal;
    const trace = traceOf((options.headers ?? defaultHeaders)(context));
    if (trace !== undefined) frame.trace = trace;
    const ids = options.ids?.(context);
    if (ids?.requestId !== undefined) frame.requestId = ids.requestId;
    if (ids?.agentId !== undefined) frame.agentId = ids.agentId;
    if (ids?.sessionId !== undefined) frame.sessionId = ids.sessionId;
    return frame;
  }

  async function view(request: ApprovalRequest, context: TContext): Promise<GatewayApprovalView> {
    let input: unknown;
    try {
      input = await registry.redactApprovalInput(request, { context: appContext(context) });
    } catch {
      input = null; // withheld: a redactor failed or the capability withholds it
    }
    return { ...request, input };
  }

  /** The request if `actor` may see it (requester or decider), else APPROVAL_NOT_FOUND (nothing leaks). */
  async function visible(id: string, actor: Actor, context: TContext): Promise<ApprovalRequest> {
    const request = await guard(() => registry.approvals.get(id));
    if (request !== null && (isRequester(surface, actor, request) || (await mayDecide(actor, request, context))))
      return request;
    throw toOrpc(new CapabilityError("APPROVAL_NOT_FOUND", GATEWAY.notVisibleMessage));
  }

  /**
   * The first page of the requests `actor` may see. Two store queries, each
   * paged until it holds a page of what the caller may see, or the store
   * ends, or the core's `gateway::LIST_SCAN_PAGES` pages were read: the caller's own requests,
   * filtered in the store by its actor id and this gateway's surface —
   * exactly `Requester::made_on`'s, so the store's first page is the whole
   * answer and no scan limit hides any (the check below is a guard) — and,
   * when the app has a `canDecide` hook, the others it allows (the app's
   * predicate: scanned, at most that many pages). The two are merged
   * in creation order.
   */
  async function visiblePage(filter: GatewayListInput, actor: Actor, context: TContext): Promise<ApprovalRequest[]> {
    const size = N.approvalPageSize(filter.limit ?? 0);
    const query = { ...filter, limit: size };
    const streams: Promise<ApprovalRequest[]>[] = [];
    if (typeof actor.id === "string") {
      streams.push(scan({ ...query, actorId: actor.id, surface }, size, async (r) => isRequester(surface, actor, r)));
    }
    if (options.canDecide !== undefined) {
      streams.push(
        scan(query, size, async (r) => !isRequester(surface, actor, r) && (await mayDecide(actor, r, context))),
      );
    }
    const found = (await Promise.all(streams)).flat();
    // Each query is in the store's creation order; a stable sort by creation
    // time merges them and keeps that order within each (same-millisecond
    // requests of the two queries keep the order of the queries).
    found.sort((a, b) => a.createdAt - b.createdAt);
    return found.slice(0, size);
  }

  /** Up to `size` requests of `filter` that `keep` accepts, reading at most `GATEWAY.listScanPages` pages. */
  async function scan(
    filter: GatewayListInput & { actorId?: string; surface?: ExposureSurface },
    size: number,
    keep: (request: ApprovalRequest) => Promise<boolean>,
  ): Promise<ApprovalRequest[]> {
    const kept: ApprovalRequest[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < GATEWAY.listScanPages; pages++) {
      const page = await guard(() => registry.approvals.page(cursor === undefined ? filter : { ...filter, cursor }));
      for (const request of page.requests) {
        if (await keep(request)) {
          kept.push(request);
          if (kept.length >= size) return kept;
        }
      }
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    return kept;
  }

  const outcome = async (
    result: Awaited<ReturnType<typeof registry.invoke>>,
    context: TContext,
  ): Promise<GatewayInvokeOutput> =>
    result.status === "ok" ? result : { status: "approval_required", request: await view(result.request, context) };

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
        const id = readId(input);
        const { context: ctx, signal: s, trace, requestId, agentId, sessionId } = frameOf(context, actor, signal);
        const resumed = registry.resume(id, {
          context: ctx,
          signal: s,
          trace,
          requestId,
          agentId,
          sessionId,
          asRequester: { surface, actor },
        });
        return outcome(await guard(() => resumed), context);
      }),
    },
  };
}

/** The router type of a gateway, for `@orpc/client`'s `RouterClient`. */
export type AgentGatewayRouter = ReturnType<typeof createAgentGateway>;

/**
 * Whether `actor`, calling through a gateway on `surface`, made `request`:
 * the core's rule (the same surface and actor id), the one resume applies.
 */
function isRequester(surface: ExposureSurface, actor: Actor, request: ApprovalRequest): boolean {
  const requestActor = request.actor?.id;
  return N.approvalMadeBy(
    surface,
    typeof actor.id === "string" ? actor.id : null,
    request.surface,
    typeof requestActor === "string" ? requestActor : null,
  );
}

/** Runs `f`, turning a `CapabilityError` into an `ORPCError` the client can read. */
async function guard<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (error) {
    throw toOrpc(error);
  }
}

function toOrpc(error: unknown): unknown {
  if (!(error instanceof CapabilityError)) return error;
  return new ORPCError(error.code, {
    status: statusOf(error),
    message: error.message,
    data: { code: error.code, kind: error.kind, retryable: error.retryable },
  });
}

function defaultHeaders(context: any): HeadersLike | undefined {
  return context?.headers ?? context?.req?.rawHeaders ?? context?.request?.headers;
}

/** The trace context of the request headers, validated by the core (invalid → none). */
export function traceOf(headers: HeadersLike | undefined): TraceContext | undefined {
  if (headers === undefined || headers === null) return undefined;
  const pairs: string[] = [];
  if (Array.isArray(headers)) {
    pairs.push(...(headers as readonly string[]));
  } else if (typeof (headers as Headers).forEach === "function" && typeof (headers as Headers).get === "function") {
    (headers as Headers).forEach((value, name) => {
      pairs.push(name, value);
    });
  } else {
    for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
      if (typeof value === "string") pairs.push(name, value);
      else if (Array.isArray(value)) for (const v of value) pairs.push(name, v);
    }
  }
  const json = N.traceFromHttpHeaders(pairs.map(String));
  return json == null ? undefined : (JSON.parse(json) as TraceContext);
}

/** The headers to send for a trace context (for clients of a gateway). */
export function traceHeaders(trace: TraceContext | undefined): Record<string, string> {
  if (trace === undefined) return {};
  const flat = N.traceToHttpHeaders(trace.traceparent, trace.tracestate ?? null);
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}
