/**
 * `createCapabilityRegistry(router, options)`: the object applications and
 * adapters use. It builds the core's registry from the router's `agent`
 * meta and runs invocations through the driver loop (`driver.ts`).
 */
import { collectProcedures, declare, policiesToJson, type CapabilityHooks } from "./declare.js";
import { drive, frozenContext, redactionInfo, type DriverHost } from "./driver.js";
import {
  argumentError,
  decideArguments,
  listFilterJson,
  optionalFunction,
  optionalSignal,
  optionsObject,
  requireString,
} from "./arguments.js";
import { call, CapabilityError, fromNative } from "./errors.js";
import { parseCoreJson, toJsonText } from "./json.js";
import { Deadlines } from "./deadlines.js";
import { APPROVAL_VIEW_FAILED_MESSAGE, INTERNAL_MESSAGE } from "./generated/protocol.js";
import { HOT, N, SHORT_INPUT_TEXT, SURFACE_INDEX } from "./native.js";
import { type CallSpan, Telemetry, type TelemetryOptions } from "./telemetry.js";
import {
  buildOnPostgres,
  PostgresAuditSink,
  postgresOf,
  syncPage,
  waitingApprovals,
  type ApprovalPage,
  type PostgresConnection,
} from "./stores.js";
import type {
  ApprovalRequest,
  Actor,
  AuditRecord,
  CapabilityDescriptor,
  ExposureSurface,
  Frame,
  InvokeResult,
  AgentPolicy,
  PolicyFunction,
  TraceContext,
} from "./types.js";

/**
 * Where approval requests live: in this process, in a SQLite file shared by
 * the processes of one machine, or in PostgreSQL shared by every instance
 * (`{postgres: url}` or `{postgres: {url, maxConnections?, tls?, …}}`).
 */
export type ApprovalStoreOption = "memory" | { sqlite: string } | { postgres: PostgresConnection };

export interface RegistryOptions<TContext = any> {
  /** Runtime-level policies, evaluated before each capability's own (SI-6). */
  policies?: AgentPolicy<TContext>[];
  defaults?: { timeoutMs?: number; approvalExpiresInMs?: number };
  /** An approver may not approve their own request. */
  approverMustDiffer?: boolean;
  approvalStore?: ApprovalStoreOption;
  /**
   * Audit subscriber, or `{subscriber, payloads}` to include redacted
   * outputs, or `{postgres: url, subscriber?, payloads?}` to write every
   * record to PostgreSQL (`registry.auditSink`).
   */
  audit?:
    | ((record: AuditRecord) => void)
    | { subscriber: (record: AuditRecord) => void; payloads?: boolean }
    | { postgres: PostgresConnection; subscriber?: (record: AuditRecord) => void; payloads?: boolean };
  /**
   * Where operators see what application code threw — a handler, policy,
   * validator or redactor — with the real error (its class, message and
   * stack). The model and the caller never see it: they get the core's
   * generic error. Default `console`; `false` logs nothing.
   */
  logger?: Logger | false;
  /**
   * OpenTelemetry: one span per governed call (`execute_tool <name>`, the
   * GenAI conventions for tool execution plus the governance outcome as
   * `orpc_agent.*` attributes, never a payload), a call counter and a
   * duration histogram. `true` uses the globally registered providers.
   * Needs `@opentelemetry/api`. The audit record's `traceparent` names the
   * call's span.
   */
  telemetry?: true | TelemetryOptions;
}

/** The part of `console` the registry logs failures to. */
export interface Logger {
  warn(message: string, error: unknown): void;
}

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

export interface InspectReport {
  valid: boolean;
  capabilities: Array<{
    id: string;
    surfaces: ExposureSurface[];
    toolNames: { aiSdk: string; mcp: string };
    resolved: Record<string, unknown>;
    warnings: Array<{ capability: string | null; path: string; code: string; message: string }>;
  }>;
  problems: unknown[];
}

function frameJson(frame: Frame, trace: TraceContext | undefined = frame.trace): string {
  return frameText({
    surface: frame.surface,
    actor: frame.actor,
    trace,
    requestId: frame.requestId,
    agentId: frame.agentId,
    sessionId: frame.sessionId,
  });
}

/**
 * A frame's JSON text as the core reads it, and hands back to the hooks
 * it shows the actor to with the same types: `JSON.stringify` (fast), or,
 * when that throws on a BigInt or wrote a run of 16 digits (an integer
 * Number past 2^53, which the core would hold as an exact integer and hand
 * back as a BigInt), the façade's writer, which keeps a BigInt exact and
 * such a Number a Number, as for inputs. A frame with no JSON form at all
 * (a cycle) stays the app's INTERNAL error: it is not the caller's input.
 */
function frameText(value: Record<string, unknown>): string {
  let text: string | undefined;
  let error: unknown;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    error = e;
  }
  if (text !== undefined && !/\d{16}/.test(text)) return text;
  try {
    return toJsonText(value);
  } catch {
    throw error ?? new CapabilityError("INTERNAL", INTERNAL_MESSAGE);
  }
}

/** Whether the frame carries more than a known surface and an actor. */
function needsJson(frame: Frame, surface: number | undefined): boolean {
  return (
    surface === undefined ||
    frame.trace !== undefined ||
    frame.requestId !== undefined ||
    frame.agentId !== undefined ||
    frame.sessionId !== undefined
  );
}

/** JSON nested deeper than any input may be (see `rawInputText`). */
const TOO_DEEP_TEXT = "[".repeat(SHORT_INPUT_TEXT) + "]".repeat(SHORT_INPUT_TEXT);

/**
 * The raw input's JSON text for the core's input limits, or `undefined`
 * when it has none (`undefined` itself, a BigInt, a cycle: values only
 * in-process code can hand over; transports deliver JSON).
 */
function rawInputText(input: unknown): string | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify(input);
  } catch (e) {
    // A RangeError: nested deeper (or larger) than JSON.stringify can go,
    // so past every limit — the core is handed a stand-in it refuses as too
    // deep. A TypeError: a BigInt or a cycle somewhere.
    text = e instanceof RangeError ? TOO_DEEP_TEXT : textWithBigInts(input);
  }
  // Text this short cannot exceed a limit (the core says how short): it
  // need not cross.
  return text !== undefined && text.length > SHORT_INPUT_TEXT ? text : undefined;
}

/**
 * The input's text with each BigInt written as its digits (a string: the
 * measure counts them as the Python binding counts a big int's digits), or,
 * when the input contains itself, the too-deep stand-in: a cycle is nested
 * without end, and the Python binding refuses it as too deep too. Anything
 * else that has no JSON text (a `toJSON` that throws) is the app's own
 * value, not measured.
 */
function textWithBigInts(input: unknown): string | undefined {
  try {
    return JSON.stringify(input, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  } catch (e) {
    return e instanceof RangeError || containsItself(input) ? TOO_DEEP_TEXT : undefined;
  }
}

/** Whether `value` reaches itself through its own properties (a cycle). */
function containsItself(value: unknown, ancestors: Set<object> = new Set()): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (ancestors.has(value)) return true;
  ancestors.add(value);
  try {
    for (const key of Object.keys(value)) {
      if (containsItself((value as Record<string, unknown>)[key], ancestors)) return true;
    }
  } catch (e) {
    return e instanceof RangeError; // too deep to walk: past every limit
  } finally {
    ancestors.delete(value);
  }
  return false;
}

/**
 * The actor's id when the actor is nothing else (no roles, no attributes):
 * such a frame crosses as one string instead of JSON. `null` when there is
 * no actor, `undefined` when the actor needs JSON.
 */
function bareActorId(actor: Frame["actor"]): string | null | undefined {
  if (actor === undefined) return null;
  if (typeof actor.id !== "string") return undefined;
  for (const key in actor) {
    if (key === "id") continue;
    const v = (actor as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (key === "roles" && Array.isArray(v) && v.length === 0) continue;
    return undefined;
  }
  return actor.id;
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
function resumeOptions<TContext>(requestId: unknown, options: unknown): ResumeOptions<TContext> {
  const fn = "registry.resume";
  requireString(fn, "requestId", requestId);
  const o = optionsObject(fn, "options", options, RESUME_KEYS) as ResumeOptions<TContext>;
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

export class CapabilityRegistry<TContext = any> implements DriverHost {
  /** @internal native registry handle */
  readonly handle: number;
  /** @internal hooks by capability index */
  readonly caps: readonly CapabilityHooks[];
  /** @internal */
  readonly runtimePolicies: ReadonlyMap<number, PolicyFunction>;
  /** @internal */
  readonly audit: ((record: AuditRecord) => void) | undefined;
  /** @internal */
  readonly deadlines = new Deadlines();
  /** @internal where failures of application code are reported (operators only) */
  logger: Logger | undefined = console;
  readonly #names: Map<string, number>;
  readonly approvals: Approvals;
  /** The PostgreSQL audit sink of `audit: {postgres}`: counters and `flush()`. */
  readonly auditSink: PostgresAuditSink | undefined;
  /** @internal OpenTelemetry, when `options.telemetry` asked for it */
  readonly telemetry: Telemetry | undefined;

  /** @internal use `createCapabilityRegistry` */
  constructor(
    handle: number,
    caps: CapabilityHooks[],
    runtimePolicies: Map<number, PolicyFunction>,
    audit: ((record: AuditRecord) => void) | undefined,
    waits = false,
    auditSink?: PostgresAuditSink,
    telemetry?: Telemetry,
  ) {
    this.auditSink = auditSink;
    this.telemetry = telemetry;
    this.handle = handle;
    this.caps = caps;
    this.runtimePolicies = runtimePolicies;
    this.audit = audit;
    this.#names = new Map();
    for (const c of JSON.parse(N.registryCapabilities(handle)) as Array<{
      index: number;
      id: string;
      toolNames: { aiSdk: string; mcp: string };
    }>) {
      for (const name of [c.id, c.toolNames.aiSdk, c.toolNames.mcp]) {
        if (!this.#names.has(name)) this.#names.set(name, c.index);
      }
    }
    const decide = (approve: boolean) => async (id: string, o?: DecideOptions) => {
      const a = decideArguments(`registry.approvals.${approve ? "approve" : "reject"}`, id, o);
      return parseCoreJson(call(() => N.approvalDecide(handle, a.id, approve, a.approver, a.reason, Date.now())));
    };
    // A store that waits (PostgreSQL) answers through promises settled off
    // the JS thread; the others answer inside a synchronous call.
    this.approvals = waits
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

  /**
   * Runs `idOrToolName` (a capability id or an adapter tool name) with the
   * raw `input` under `frame`. Resolves `{status: "ok", output}` or
   * `{status: "approval_required", request}`; rejects with `CapabilityError`.
   */
  invoke<TOutput = unknown>(
    idOrToolName: string,
    input: unknown,
    frame: Frame<TContext>,
  ): Promise<InvokeResult<TOutput>> {
    if (frame === null || typeof frame !== "object") {
      // A host bug, not a model's: a TypeError, rejected like every other failure.
      return Promise.reject(new TypeError("registry.invoke needs a frame: { surface, actor?, context?, … }."));
    }
    if (typeof idOrToolName !== "string") {
      return Promise.reject(
        argumentError("registry.invoke", "idOrToolName", "a capability id or tool name (a string)", idOrToolName),
      );
    }
    let index: number | undefined;
    let start: number;
    let span: CallSpan | undefined;
    try {
      // Inside the try: a getter of the app's frame that throws rejects
      // (INTERNAL, its text not shown) instead of throwing here.
      optionalSignal("registry.invoke", "frame.signal", frame.signal);
      optionalFunction("registry.invoke", "frame.onProgress", frame.onProgress);
      index = this.#names.get(idOrToolName);
      // Only the core's own surface names have an index (a Map: own entries
      // only, so "constructor" or "__proto__" find nothing); anything else
      // crosses as text for the core's parser, which refuses it.
      const surface = SURFACE_INDEX.get(frame.surface);
      // How the frame crosses: nothing beyond the surface (null), an actor id
      // (a string), or JSON (undefined).
      const actorId = needsJson(frame, surface) ? undefined : bareActorId(frame.actor);
      // The raw input as JSON text, which the core measures against the input
      // limits before any step (no validator, policy or handler sees an
      // over-limit input).
      const text = rawInputText(input);
      if (this.telemetry !== undefined) {
        // The call's span is the trace the core records.
        span = this.telemetry.begin(frame.trace);
        const fj = frameJson(frame, span.trace);
        start = N.invokeStartName(this.handle, idOrToolName, surface ?? 0, fj, text, Date.now());
      } else if (index === undefined || this.audit !== undefined || this.auditSink !== undefined) {
        // With an audit subscriber the core records the name asked for, so
        // it resolves the name itself; otherwise the cached index saves it.
        const fj = actorId === null ? null : frameJson(frame);
        start = N.invokeStartName(this.handle, idOrToolName, surface ?? 0, fj, text, Date.now());
      } else if (actorId === null) {
        start = HOT.start(this.handle, index, surface!, text, Date.now());
      } else if (actorId !== undefined) {
        start = HOT.startActor(this.handle, index, surface!, actorId, text, Date.now());
      } else {
        start = N.invokeStart(this.handle, index, surface ?? 0, frameJson(frame), text, Date.now());
      }
    } catch (e) {
      return Promise.reject(notStarted(fromNative(e), span));
    }
    if (span === undefined) return drive(this, start, index, input, frame) as Promise<InvokeResult<TOutput>>;
    const s = span;
    return s.run(() => drive(this, start, index, input, frame, s)) as Promise<InvokeResult<TOutput>>;
  }

  /**
   * Runs an approved request (single use): stage 7, then stages 9–14 with
   * the surface and actor recorded when the request was made (SI-3). The
   * options give the application context, a signal, trace and ids.
   */
  resume<TOutput = unknown>(
    requestId: string,
    options?: ResumeOptions<TContext> | null,
  ): Promise<InvokeResult<TOutput>> {
    let frame: Frame<TContext>;
    let start: number;
    let span: CallSpan | undefined;
    try {
      const o = resumeOptions<TContext>(requestId, options);
      frame = { surface: "direct", ...o };
      const by = o.asRequester;
      span = this.telemetry?.begin(o.trace);
      const fj = frameText({
        surface: by?.surface ?? "direct",
        actor: by?.actor,
        trace: span === undefined ? o.trace : span.trace,
        requestId: o.requestId,
        agentId: o.agentId,
        sessionId: o.sessionId,
      });
      let through: number | undefined;
      if (o.throughTool !== undefined) {
        // An unknown tool can have no request: the index past the last
        // capability makes the core answer APPROVAL_NOT_FOUND.
        through = this.#names.get(o.throughTool) ?? this.caps.length;
      }
      // An already aborted signal is told to the core, which ends the call
      // CANCELLED (audited) before its consume: nothing is consumed.
      start = N.resumeStart(
        this.handle,
        requestId,
        fj,
        by !== undefined || through !== undefined,
        Date.now(),
        through,
        o.signal?.aborted === true,
      );
    } catch (e) {
      return Promise.reject(notStarted(fromNative(e), span));
    }
    if (span === undefined) return drive(this, start, undefined, undefined, frame) as Promise<InvokeResult<TOutput>>;
    const s = span;
    return s.run(() => drive(this, start, undefined, undefined, frame, s)) as Promise<InvokeResult<TOutput>>;
  }

  /**
   * The model-safe view of a request's input for approval UIs: the
   * capability's `redact.approvalInput` with the request's recorded surface
   * and actor, or the stored input when it declares none. A throwing
   * redactor rejects with EXECUTION_FAILED (never the input).
   */
  async redactApprovalInput(request: ApprovalRequest, info?: { context?: TContext } | null): Promise<unknown> {
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
    const view = parseCoreJson(call(() => N.approvalInputView(this.handle, text)));
    if (view.view === "asStored") return view.input;
    if (view.view === "withhold") throw CapabilityError.fromJSON(view.error);
    const hooks = this.caps[view.capabilityIndex];
    const redact = hooks?.meta.redact?.approvalInput;
    if (!redact) throw new CapabilityError("INTERNAL", "no approval-input redactor");
    try {
      return await redact(request.input, redactionInfo(view.info, frozenContext(context)));
    } catch {
      throw new CapabilityError("EXECUTION_FAILED", APPROVAL_VIEW_FAILED_MESSAGE);
    }
  }

  /** The inspect() report: resolved values, surfaces, tool names, warnings. */
  inspect(): InspectReport {
    return JSON.parse(call(() => N.registryInspect(this.handle)));
  }

  /** Portable descriptors of the capabilities exposed on `surface`. */
  descriptors(options: { surface: ExposureSurface }): CapabilityDescriptor[] {
    const { surface } = optionsObject("registry.descriptors", "the options", options, ["surface"]);
    requireString("registry.descriptors", "options.surface", surface);
    return JSON.parse(call(() => N.registryDescriptors(this.handle, surface as string)));
  }

  /**
   * The same descriptors as one CBOR array, each item the JSON fields plus
   * a `metadata` map of their `std:` tool-definition keys (the core's
   * encoding, as the gateway's CBOR listing sends it).
   */
  descriptorsCbor(options: { surface: ExposureSurface }): Uint8Array {
    const { surface } = optionsObject("registry.descriptorsCbor", "the options", options, ["surface"]);
    requireString("registry.descriptorsCbor", "options.surface", surface);
    return new Uint8Array(call(() => N.registryDescriptorsCbor(this.handle, surface as string)));
  }

  /** Invocations still running (diagnostics; 0 when idle). */
  inFlight(): number {
    return call(() => N.registryInFlight(this.handle));
  }

  /** Releases the native registry. Later calls fail with INTERNAL. */
  close(): void {
    N.registryClose(this.handle);
  }
}

/**
 * Builds a registry from an oRPC router: every procedure with `agent` meta
 * (nested and lazy routers included; lazy ones are loaded here) becomes a
 * capability whose id is its router path joined with `.`. Rejects with
 * `RegistryValidationError` listing every problem at once (SI-4).
 */
export async function createCapabilityRegistry<TContext = any>(
  router: unknown,
  options: RegistryOptions<TContext> = {},
): Promise<CapabilityRegistry<TContext>> {
  if (router === null || (typeof router !== "object" && typeof router !== "function")) {
    throw argumentError(
      "createCapabilityRegistry",
      "the router",
      "an oRPC router (an object of procedures) or a procedure",
      router,
    );
  }
  if (options !== undefined && (options === null || typeof options !== "object" || Array.isArray(options))) {
    throw argumentError(
      "createCapabilityRegistry",
      "the options",
      "an object ({ policies?, defaults?, approvalStore?, audit?, … })",
      options,
    );
  }
  const found = await collectProcedures(router);
  const decls: unknown[] = [];
  const caps: CapabilityHooks[] = [];
  for (const f of found) {
    const { decl, hooks } = declare(f);
    decls.push(decl);
    caps.push(hooks);
  }
  const runtimePolicies = new Map<number, PolicyFunction>();
  // Everything but the binding's own options goes to the core, which
  // reports unknown keys (UNKNOWN_FIELD) instead of ignoring a typo.
  const { approvalStore, audit, logger, telemetry, ...core } = options as RegistryOptions<TContext> &
    Record<string, unknown>;
  if (logger !== undefined && logger !== false && (logger === null || typeof (logger as Logger).warn !== "function")) {
    throw argumentError(
      "createCapabilityRegistry",
      "options.logger",
      "an object with a warn(message, error) method, or false",
      logger,
    );
  }
  const opts: Record<string, unknown> = { ...core };
  if (options.policies !== undefined) opts.policies = policiesToJson(options.policies, runtimePolicies);
  // The runtime policy functions held here: a `{ host: true }` marker
  // without one is the core's MISSING_HOOK problem.
  opts.hostPolicies = [...runtimePolicies.keys()];
  const tel = await openTelemetry(telemetry);
  const auditPg = postgresOf(audit, ["subscriber", "payloads"]);
  const sink = auditPg === undefined ? undefined : await PostgresAuditSink.open(auditPg);
  const subscriber =
    typeof audit === "function" ? audit : typeof audit === "object" && audit !== null ? audit.subscriber : undefined;
  // Not a subscriber: the core names the problem (UNKNOWN_FIELD, as the registry vectors expect).
  if (audit !== undefined && typeof subscriber !== "function" && sink === undefined) opts.audit = audit;
  const payloads = typeof audit === "object" && audit !== null && audit.payloads === true;
  // The core audits when a subscriber, telemetry or the sink reads its
  // records; the façade sees them only for the first two (the sink is fed
  // from Rust).
  const toHost = typeof subscriber === "function" || tel !== undefined;
  const audits = toHost || sink !== undefined;
  const storePg = postgresOf(approvalStore);
  const build = [JSON.stringify(decls), JSON.stringify(opts)] as const;
  let handle: number;
  try {
    handle =
      storePg === undefined
        ? call(() => N.registryBuild(...build, JSON.stringify(approvalStore ?? "memory"), audits, payloads))
        : await buildOnPostgres(storePg, ...build, audits, payloads);
    if (sink !== undefined) call(() => N.registryAttachAuditSink(handle, sink.handle, toHost));
    if (tel?.payloads === true) call(() => N.registrySpanPayloads(handle, true));
  } catch (e) {
    sink?.close(); // no registry holds it: its pool goes too
    throw e;
  }
  const registry = new CapabilityRegistry<TContext>(
    handle,
    caps,
    runtimePolicies,
    typeof subscriber === "function" ? subscriber : undefined,
    storePg !== undefined,
    sink,
    tel,
  );
  registry.logger = logger === false ? undefined : ((logger as Logger | undefined) ?? console);
  return registry;
}

/** `options.telemetry` read: off, the global providers (`true`), or the given ones. */
async function openTelemetry(option: unknown): Promise<Telemetry | undefined> {
  if (option === undefined || option === false) return undefined;
  if (option === true) return Telemetry.open({});
  const o = optionsObject(
    "createCapabilityRegistry",
    "options.telemetry",
    option,
    ["tracerProvider", "meterProvider", "payloads"],
    true,
  );
  const payloads = (o as Record<string, unknown>).payloads;
  if (payloads !== undefined && typeof payloads !== "boolean") {
    throw argumentError("createCapabilityRegistry", "options.telemetry.payloads", "a boolean", payloads);
  }
  for (const [key, method] of [
    ["tracerProvider", "getTracer"],
    ["meterProvider", "getMeter"],
  ] as const) {
    const v = (o as Record<string, unknown>)[key];
    if (v !== undefined && typeof (v as Record<string, unknown> | null)?.[method] !== "function") {
      throw argumentError("createCapabilityRegistry", `options.telemetry.${key}`, `an object with ${method}()`, v);
    }
  }
  return Telemetry.open(o as TelemetryOptions);
}

/** A call the core never started: its span (if any) ends with the error. */
function notStarted(error: unknown, span: CallSpan | undefined): unknown {
  span?.endWithError(error instanceof CapabilityError ? error.code : "INTERNAL");
  return error;
}

/** The approval input hash (DESIGN §5) the core computes for `capabilityId` and `input`. */
export function inputHash(capabilityId: string, input: unknown): string {
  requireString("inputHash", "capabilityId", capabilityId);
  const text = toJsonText(input);
  return call(() => N.inputHash(capabilityId, text));
}
