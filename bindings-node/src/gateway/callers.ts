/**
 * What a gateway knows of the caller of a request: the authenticated actor
 * (`actorOf`), whether they may decide a request (`mayDecide`), the frame
 * of their call (`frameOf`), the approval requests they may see
 * (`visible`, `visiblePage`) and how they see a request or an outcome
 * (`view`, `outcome`). Made once per gateway by `createAgentGateway`
 * (`server.ts`) over its registry, options and surface; apart from it so
 * the router stays its procedures.
 */
import { ORPCError } from "@orpc/server";

import { CapabilityError } from "../errors.js";
import { GATEWAY } from "../generated/protocol.js";
import { requireWellFormed } from "../json.js";
import { N } from "../native.js";
import type { CapabilityRegistry } from "../registry.js";
import type { Actor, ApprovalRequest, ExposureSurface, Frame } from "../types.js";
import { guard, toOrpc } from "./guard.js";
import type { AgentGatewayOptions } from "./server.js";
import { defaultHeaders, traceOf } from "./trace-headers.js";
import type { GatewayApprovalView, GatewayInvokeOutput, GatewayListInput } from "./wire.js";

/** The caller checks and views of one gateway (its `registry`, `options` and `surface`). */
export function gatewayCallers<TContext extends object, TAppContext>(
  registry: CapabilityRegistry<TAppContext>,
  options: AgentGatewayOptions<TContext, TAppContext>,
  surface: ExposureSurface,
) {
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
    // An id with a lone surrogate would cross to the core rewritten (U+FFFD),
    // one caller's id becoming another's: refused, as a call's frame refuses it.
    if (typeof actor.id === "string") await guard(async () => requireWellFormed(actor.id as string, "/actor/id"));
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

  return { actorOf, mayDecide, frameOf, view, visible, visiblePage, outcome };
}

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
