/**
 * `CapabilityRegistry`: the object applications and adapters use, built by
 * `createCapabilityRegistry` (`create-registry.ts`). It runs invocations
 * through the driver loop (`driver.ts`); how a call's frame and input cross
 * into the core is in `call-crossing.ts`, the approval API in `approvals.ts`.
 */
import type { CapabilityHooks } from "./declare.js";
import { drive } from "./driver.js";
import { releaseHolds } from "./handler-hold.js";
import type { DriverHost } from "./driver-host.js";
import { argumentError, optionalFunction, optionalSignal, optionsObject, requireString } from "./arguments.js";
import { call, fromNative } from "./errors.js";
import { Deadlines } from "./deadlines.js";
import { HOT, N, SURFACE_INDEX } from "./native.js";
import type { CallSpan, Telemetry } from "./telemetry.js";
import type { PostgresAuditSink } from "./stores.js";
import {
  redactApprovalInput,
  registryApprovals,
  resumeOptions,
  type Approvals,
  type ResumeOptions,
} from "./approvals.js";
import { bareActorId, notStarted, NonFiniteInput, rawInputText } from "./call-crossing.js";
import { frameFields, frameJson, frameText, needsJson } from "./frame-crossing.js";
import type { InspectReport, Logger } from "./create-registry.js";
import type {
  ApprovalRequest,
  AuditRecord,
  CapabilityDescriptor,
  ExposureSurface,
  Frame,
  InvokeResult,
  PolicyFunction,
} from "./types.js";

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
    this.approvals = registryApprovals(handle, waits);
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
      frameFields("registry.invoke", "frame", frame);
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
      const raw = rawInputText(input);
      const nonFinite = raw instanceof NonFiniteInput ? raw : undefined; // refused by the core, after exposure
      const text = nonFinite === undefined ? (raw as string | undefined) : nonFinite.text;
      // A caller already gone: the core stores, consumes and runs nothing.
      const cancelled = frame.signal?.aborted === true;
      if (this.telemetry !== undefined) span = this.telemetry.begin(frame.trace); // the trace the core records
      // With telemetry or an audit subscriber the core records the name asked
      // for, so it resolves the name itself; otherwise the cached index saves it.
      const byName = span !== undefined || index === undefined || nonFinite !== undefined || cancelled;
      if (byName || this.audit !== undefined || this.auditSink !== undefined) {
        const fj = span !== undefined ? frameJson(frame, span.trace) : actorId === null ? null : frameJson(frame);
        const at = nonFinite?.at;
        start = N.invokeStartName(this.handle, idOrToolName, surface ?? 0, fj, text, Date.now(), at, cancelled);
      } else if (actorId === null) {
        start = HOT.start(this.handle, index!, surface!, text, Date.now());
      } else if (actorId !== undefined) {
        start = HOT.startActor(this.handle, index!, surface!, actorId, text, Date.now());
      } else {
        start = N.invokeStart(this.handle, index!, surface ?? 0, frameJson(frame), text, Date.now());
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
      // The core resolves the tool (one it does not know has no request)
      // and decides what the limit allows. An already aborted signal is
      // told to the core, which ends the call CANCELLED (audited) before
      // its consume: nothing is consumed.
      start = N.resumeStart(
        this.handle,
        requestId,
        fj,
        by !== undefined,
        Date.now(),
        o.throughTool,
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
  redactApprovalInput(request: ApprovalRequest, info?: { context?: TContext } | null): Promise<unknown> {
    return redactApprovalInput(this, request, info);
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

  /** Releases the native registry (a call an agent adapter holds ends, unrun). Later calls fail with INTERNAL. */
  close(): void {
    releaseHolds(this.handle);
    N.registryClose(this.handle);
  }
}
