/**
 * The registry's approval API, apart from the call path: the `approvals`
 * object approval UIs use, `resume`'s options and their checks, the
 * model-safe view of a request's input, and the approval input hash. None
 * of it runs on `registry.invoke`.
 */
import {
  argumentError,
  decideArguments,
  listFilterJson,
  optionalFunction,
  optionalSignal,
  optionsObject,
  requireString,
} from "./arguments.js";
import { boundedBy } from "./bounded-waits.js";
import { call, CapabilityError } from "./errors.js";
import { parseCoreJson, toJsonText } from "./json.js";
import { APPROVAL_VIEW_FAILED_MESSAGE, ApprovalView } from "./generated/protocol.js";
import { N } from "./native.js";
import { frozenContext, redactionInfo } from "./frozen-views.js";
import type { DriverHost } from "./driver-host.js";
import { syncPage, waitingApprovals, type ApprovalPage } from "./stores.js";
import type { Actor, ApprovalRequest, ExposureSurface, Frame, TraceContext } from "./types.js";

export interface ResumeOptions<TContext = any> {
  /** The application context for the procedure (the recorded actor and surface are used, SI-3). */
  context?: TContext;
  signal?: AbortSignal;
  /** Receives the handler's accepted progress reports. */
  onProgress?: Frame["onProgress"];
  trace?: TraceContext;
  requestId?: string;
  agentId?: string;
  sessionId?: string;
  /**
   * Resume only if this actor made the request, on this surface — what a
   * caller who may resume only its own requests gets (the agent gateway).
   * Any other request is APPROVAL_NOT_FOUND and is not consumed; the core
   * decides. Without it the caller is trusted to resume any request.
   */
  asRequester?: { surface: ExposureSurface; actor: Actor };
  /**
   * With `asRequester`: the resume comes through this capability's tool (an
   * id or tool name), as over MCP, where the client names the request id.
   * Only a request for this capability is resumed, and an `asRequester`
   * actor without an id may resume only a request made without one. The
   * core decides; anything else is APPROVAL_NOT_FOUND and consumes nothing.
   */
  throughTool?: string;
}

export interface ApprovalListFilter {
  capabilityId?: string;
  actorId?: string;
  /** Only requests made on this surface (with `actorId`: exactly that requester's own). */
  surface?: ExposureSurface;
  status?: ApprovalRequest["status"];
  limit?: number;
  cursor?: string;
}

export interface DecideOptions {
  /** Who decides: an id, or an actor (its `id`). */
  approver?: string | Actor | null;
  reason?: string;
}

/** Approval operations for approval UIs. Asynchronous so remote stores fit the same API. */
export interface Approvals {
  get(id: string): Promise<ApprovalRequest | null>;
  list(filter?: ApprovalListFilter): Promise<ApprovalRequest[]>;
  /** One page and the cursor of the next (`null` on the last page): pass it as `cursor`. */
  page(filter?: ApprovalListFilter): Promise<ApprovalPage>;
  approve(id: string, options?: DecideOptions): Promise<ApprovalRequest>;
  reject(id: string, options?: DecideOptions): Promise<ApprovalRequest>;
}

const RESUME_KEYS = [
  "context",
  "signal",
  "onProgress",
  "trace",
  "requestId",
  "agentId",
  "sessionId",
  "asRequester",
  "throughTool",
] as const;

/** `resume`'s arguments checked (the ids and trace are checked by the core, which names them). */
export function resumeOptions<TContext>(requestId: unknown, options: unknown): ResumeOptions<TContext> {
  const fn = "registry.resume";
  requireString(fn, "requestId", requestId);
  // Strict: a misspelt limit (`asrequester`, `through_tool`) ignored would
  // resume as trusted, any request for anyone.
  const o = optionsObject(fn, "options", options, RESUME_KEYS, true) as ResumeOptions<TContext>;
  optionalSignal(fn, "options.signal", o.signal);
  optionalFunction(fn, "options.onProgress", o.onProgress);
  const by = o.asRequester as unknown;
  if (by !== undefined) {
    const b = by as { surface?: unknown; actor?: unknown } | null;
    if (
      b === null ||
      typeof b !== "object" ||
      typeof b.surface !== "string" ||
      b.actor === null ||
      typeof b.actor !== "object"
    ) {
      throw argumentError(fn, "options.asRequester", "{ surface, actor } (the surface and actor of the caller)", by);
    }
  }
  if (o.throughTool !== undefined) requireString(fn, "options.throughTool", o.throughTool);
  return o;
}

/** The registry's `approvals` over the native registry `handle` (its constructor's). */
export function registryApprovals(handle: number, waits: boolean): Approvals {
  const decide = (approve: boolean) => async (id: string, o?: DecideOptions) => {
    const a = decideArguments(`registry.approvals.${approve ? "approve" : "reject"}`, id, o);
    return parseCoreJson(call(() => N.approvalDecide(handle, a.id, approve, a.approver, a.reason, Date.now())));
  };
  // A store that waits (PostgreSQL) answers through promises settled off
  // the JS thread; the others answer inside a synchronous call.
  return waits
    ? Object.freeze(waitingApprovals(handle))
    : Object.freeze({
        get: async (id: string) => {
          requireString("registry.approvals.get", "the request id", id);
          const text = call(() => N.approvalGet(handle, id, Date.now()));
          return text == null ? null : parseCoreJson(text);
        },
        list: async (filter?: ApprovalListFilter) => {
          const json = listFilterJson("registry.approvals.list", filter);
          return parseCoreJson(call(() => N.approvalList(handle, json, Date.now())));
        },
        page: async (filter?: ApprovalListFilter) =>
          syncPage(handle, listFilterJson("registry.approvals.page", filter)),
        approve: decide(true),
        reject: decide(false),
      });
}

/** `registry.redactApprovalInput` (documented there). */
export async function redactApprovalInput<TContext>(
  registry: DriverHost,
  request: ApprovalRequest,
  info?: { context?: TContext } | null,
): Promise<unknown> {
  const fn = "registry.redactApprovalInput";
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    throw argumentError(fn, "the request", "an approval request (as get, list and invoke return it)", request);
  }
  const { context } = optionsObject(fn, "the options", info, ["context"]);
  let text: string;
  try {
    text = toJsonText(request);
  } catch {
    throw argumentError(fn, "the request", "an approval request (as get, list and invoke return it)", request);
  }
  // A request whose capability is gone throws the core's NOT_FOUND here.
  const view = parseCoreJson(call(() => N.approvalInputView(registry.handle, text)));
  if (view.view === ApprovalView.AsStored) return view.input;
  if (view.view !== ApprovalView.Redact) throw new CapabilityError("INTERNAL", "unknown approval view");
  const hooks = registry.caps[view.capabilityIndex];
  const redact = hooks?.meta.redact?.approvalInput;
  if (!redact) throw new CapabilityError("INTERNAL", "no approval-input redactor");
  try {
    // The core's copy of the input (parsed from the request's text), as
    // Python's deep copy and Swift's values: a redactor that edits it in
    // place changes nothing of the host's request. Bounded by the core's
    // `timeoutMs`: one that never settles holds no approval UI or MCP call.
    const redacted = redact(view.input, redactionInfo(view.info, frozenContext(context)));
    const b = await boundedBy(redacted, Date.now() + view.timeoutMs, undefined);
    if (b.settled === "value") return b.value;
  } catch {
    // thrown or rejected: as a late one
  }
  throw new CapabilityError("EXECUTION_FAILED", APPROVAL_VIEW_FAILED_MESSAGE);
}

/** The approval input hash (DESIGN §5) the core computes for `capabilityId` and `input`. */
export function inputHash(capabilityId: string, input: unknown): string {
  requireString("inputHash", "capabilityId", capabilityId);
  const text = toJsonText(input);
  return call(() => N.inputHash(capabilityId, text));
}
