/**
 * The driver loop: runs one invocation of the core's state machine.
 *
 * Each native call is synchronous and returns the next step as one number
 * (`kind + 16 × aux`, see `native/invoke.rs`); this loop performs the step —
 * validate with the procedure's schema, call a host policy, run the
 * procedure's middlewares and handler, sleep, redact, deliver an audit
 * record — and answers. Node awaits the handler's promise; Rust never does.
 * Every decision (order, eligibility, deadlines, what may leak) is the
 * core's: nothing here decides whether a step happens, only how to do it.
 */
import { CapabilityError, fromNative } from "./errors.js";
import { Answer, DECISION_CODE as DECISION_CODES, Kind } from "./generated/protocol.js";
import { HOT, N } from "./native.js";
import { auditRecordFromRow } from "./audit.js";
import { Attempt, isThenable } from "./attempt.js";
import type { Deadlines } from "./deadlines.js";
import type { ReportProgress } from "./progress.js";
import { exportInputText, parseCoreJson, toJsonText } from "./json.js";
import { storeStep } from "./stores.js";
import { logFailure } from "./log.js";
import type { CallSpan } from "./telemetry.js";
import { issuesJson, type StandardResult } from "./schema.js";
import type { CapabilityHooks } from "./declare.js";
import type {
  AuditRecord,
  Frame,
  FrozenFrame,
  InvokeResult,
  PolicyDecision,
  PolicyFunction,
  RedactionInfo,
} from "./types.js";

/** What the loop needs of its registry. */
export interface DriverHost {
  readonly handle: number;
  readonly caps: readonly CapabilityHooks[];
  readonly runtimePolicies: ReadonlyMap<number, PolicyFunction>;
  readonly audit: ((record: AuditRecord) => void) | undefined;
  readonly deadlines: Deadlines;
  readonly logger: { warn(message: string, error: unknown): void } | undefined;
}

// ----- host answers -----------------------------------------------------------

/** The core's decision codes by name (a Map: own entries only, so no `constructor`). */
const DECISION_CODE: ReadonlyMap<string, number> = new Map(Object.entries(DECISION_CODES));

/** A decision field as given: absent (null) or of its type; else the `BAD` marker. */
const BAD = Symbol("not a decision field");
function field(v: unknown, type: "string" | "number"): unknown {
  return v === undefined || v === null ? null : typeof v === type ? v : BAD;
}

/**
 * What a hook's promise came to, or what came first: the call's deadline
 * (`late`) or the caller's cancellation (`cancelled`).
 */
type Bounded<T> = { settled: "value"; value: T } | { settled: "late" } | { settled: "cancelled" };

/** A hook that did not settle in time or was cancelled. */
type Missed = { settled: "late" | "cancelled" };

const CANCELLED = Symbol("cancelled by the caller");

/**
 * A promise that settles with `CANCELLED` when the caller's signal aborts
 * (never, without a signal), and its listener's removal.
 */
function whenAborted(signal: AbortSignal | undefined): { aborted: Promise<typeof CANCELLED>; dispose(): void } {
  if (signal === undefined) return { aborted: new Promise(() => {}), dispose() {} };
  if (signal.aborted) return { aborted: Promise.resolve(CANCELLED), dispose() {} };
  let onAbort: () => void = () => {};
  const aborted = new Promise<typeof CANCELLED>((resolve) => {
    onAbort = () => resolve(CANCELLED);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return { aborted, dispose: () => signal.removeEventListener("abort", onAbort) };
}

/**
 * Awaits a hook's promise until the call's deadline (the core's
 * `callDeadline`) or the caller's cancellation: a validator or redactor
 * that never settles must not hold the call. The core decides what a late
 * or cancelled hook means (`Answer.DeadlinePassed`, `Answer.Cancelled`); a
 * hook already settled wins a tie.
 */
async function bounded<T>(p: Promise<T>, reg: number, h: number, signal: AbortSignal | undefined): Promise<Bounded<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Bounded<T>>((resolve) => {
    timer = setTimeout(() => resolve({ settled: "late" }), Math.max(0, N.invokeCallDeadline(reg, h) - Date.now()));
  });
  const cancel = whenAborted(signal);
  try {
    return await Promise.race([
      p.then((value) => ({ settled: "value" as const, value })),
      late,
      cancel.aborted.then(() => ({ settled: "cancelled" as const })),
    ]);
  } finally {
    clearTimeout(timer);
    cancel.dispose();
  }
}

/**
 * A hook's answer as `bounded` reports it: at once for a value (no extra
 * turn of the event loop on the hot path), bounded by the call's deadline
 * and the caller's cancellation for a promise.
 */
function hookAnswer<T>(
  got: T | PromiseLike<T>,
  reg: number,
  h: number,
  signal: AbortSignal | undefined,
): Bounded<T> | Promise<Bounded<T>> {
  return isThenable(got) ? bounded(Promise.resolve(got), reg, h, signal) : { settled: "value", value: got as T };
}

/** The answer for a hook that did not settle in time or was cancelled. */
function unsettled(b: Missed, reg: number, h: number): number {
  return b.settled === "late"
    ? N.answer(reg, h, Answer.DeadlinePassed, Date.now())
    : N.answer(reg, h, Answer.Cancelled, Date.now());
}

/** A frozen shallow copy of the application context for hooks (SI-3). */
export function frozenContext(context: unknown): unknown {
  return context !== null && typeof context === "object" ? Object.freeze({ ...context }) : context;
}

function frozenFrame(frame: Frame, context: unknown): FrozenFrame {
  const actor = frame.actor ?? {};
  return Object.freeze({
    surface: frame.surface,
    actor: Object.freeze({
      ...actor,
      roles: Object.freeze([...(actor.roles ?? [])]) as string[],
      attributes: Object.freeze({ ...(actor.attributes ?? {}) }),
    }),
    context,
    trace: frame.trace,
    requestId: frame.requestId,
    agentId: frame.agentId,
    sessionId: frame.sessionId,
  });
}

/** Waits `ms` or until `signal` aborts; true if it aborted. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(true);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(false);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * One governed invocation. `start` is the packed result of
 * `invokeStart`/`invokeStartName`/`resumeStart`; `input` the caller's raw
 * input (`undefined` on resume: the core holds the stored input).
 */
/** The hooks of the capability an invocation resolved (name path, resume). */
function hooksOf(host: DriverHost, h: number): CapabilityHooks {
  const hooks = host.caps[N.invokeCapability(host.handle, h)];
  if (hooks === undefined) throw new CapabilityError("INTERNAL", "no capability for this step");
  return hooks;
}

export async function drive(
  host: DriverHost,
  start: number,
  capIndex: number | undefined,
  input: unknown,
  frame: Frame,
  span?: CallSpan,
): Promise<InvokeResult> {
  const reg = host.handle;
  let kind = start % 16;
  const h = (start - kind) / 16;
  let aux = 0;
  let r = 0;
  let value = input;
  let output: unknown;
  let fromCore = capIndex === undefined;
  let report: ReportProgress | undefined;
  let hooks: CapabilityHooks | undefined = capIndex === undefined ? undefined : host.caps[capIndex];
  let context: unknown;
  let signal: AbortSignal | undefined;

  try {
    // Read inside the try: a getter of the app's frame that throws ends the
    // invocation like any other failure (INTERNAL, its text not shown).
    // A fresh `{}` when the caller gives none, as oRPC's `call()` does.
    context = frame.context ?? {};
    signal = frame.signal;
    if (kind === Kind.RunHandler || kind === Kind.EvaluatePolicy) aux = N.invokeAux(reg, h);
    for (;;) {
      switch (kind) {
        case Kind.ValidateInput: {
          let res: StandardResult | undefined;
          let missed: Missed | undefined;
          try {
            hooks ??= hooksOf(host, h);
            let b = hookAnswer(
              hooks.inputSchema!["~standard"].validate(value) as StandardResult | Promise<StandardResult>,
              reg,
              h,
              signal,
            );
            if (isThenable(b)) b = await b;
            if (b.settled === "value") res = b.value;
            else missed = b;
          } catch (e) {
            res = undefined; // the validator threw: its text may quote the input
            logFailure(host, h, "the input validator", e);
          }
          if (missed) {
            r = unsettled(missed, reg, h);
          } else if (res === undefined) {
            r = N.answer(reg, h, Answer.InputValidatorFailed, Date.now());
          } else if (res.issues) {
            r = N.answer(reg, h, Answer.InputIssues, Date.now(), issuesJson(res.issues));
          } else {
            value = res.value;
            r = HOT.answer(reg, h, Answer.InputValid, Date.now());
          }
          break;
        }
        case Kind.EvaluatePolicy:
          hooks ??= hooksOf(host, h);
          r = await evaluatePolicy(host, hooks, h, aux, value, frame, signal);
          break;
        case Kind.ExportInput:
          try {
            const { text, rebuilds } = exportInputText(value);
            r = N.answer(reg, h, Answer.InputExported, Date.now(), text, rebuilds);
          } catch (e) {
            // The core quotes the reason to the caller: only the library's
            // own (or the app's CapabilityError) says why; an exception of
            // application code (a throwing `toJSON` or getter) may quote data.
            r = N.answer(
              reg,
              h,
              Answer.InputNotExportable,
              Date.now(),
              e instanceof CapabilityError ? e.message : null,
            );
          }
          break;
        case Kind.RunHandler: {
          if (fromCore) {
            // A resumed call: the handler gets the stored validated input.
            const text = N.invokeInputJson(reg, h);
            value = text == null ? undefined : parseCoreJson(text);
            fromCore = false;
          }
          const attempt = new Attempt(host, h, signal);
          attempt.onProgress = frame.onProgress;
          attempt.report = report;
          hooks ??= hooksOf(host, h);
          r = await attempt.run(hooks, aux, value, context);
          report = attempt.report;
          output = attempt.output;
          break;
        }
        case Kind.AskRetryOn: {
          const error = CapabilityError.fromJSON(parseCoreJson(N.invokeRetryError(reg, h)));
          let retry = false;
          try {
            hooks ??= hooksOf(host, h);
            retry = hooks.meta.retry?.retryOn?.(error) === true;
          } catch {
            retry = false; // a throwing predicate does not retry
          }
          r = N.answer(reg, h, Answer.RetryOn, Date.now(), null, retry);
          break;
        }
        case Kind.Sleep: {
          const aborted = await sleep(aux, signal);
          r = aborted ? N.answer(reg, h, Answer.Cancelled, Date.now()) : N.answer(reg, h, Answer.Slept, Date.now());
          break;
        }
        case Kind.ValidateOutput: {
          let res: StandardResult = { issues: [{ message: "late" }] };
          let missed: Missed | undefined;
          try {
            hooks ??= hooksOf(host, h);
            let b = hookAnswer(
              hooks.outputSchema!["~standard"].validate(output) as StandardResult | Promise<StandardResult>,
              reg,
              h,
              signal,
            );
            if (isThenable(b)) b = await b;
            if (b.settled === "value") res = b.value;
            else missed = b;
          } catch (e) {
            res = { issues: [{ message: "the output validator threw" }] };
            logFailure(host, h, "the output validator", e);
          }
          if (missed) {
            output = undefined; // the unvalidated value goes nowhere
            r = unsettled(missed, reg, h);
          } else if (res.issues) {
            output = undefined;
            r = N.answer(reg, h, Answer.OutputInvalid, Date.now());
          } else {
            output = res.value;
            r = N.answer(reg, h, Answer.OutputValid, Date.now());
          }
          break;
        }
        case Kind.RedactOutput: {
          const raw = parseCoreJson(N.invokeRedactionInfo(reg, h));
          try {
            // The frozen context copy reads the app context's getters: one
            // that throws fails the redactor, like a redactor that throws.
            const info = redactionInfo(raw, frozenContext(context));
            hooks ??= hooksOf(host, h);
            let b = hookAnswer(hooks.meta.redact!.output!(output, info), reg, h, signal);
            if (isThenable(b)) b = await b;
            if (b.settled === "value") {
              output = b.value;
              r = N.answer(reg, h, Answer.Redacted, Date.now());
            } else {
              output = undefined; // the unredacted value goes nowhere (SI-10)
              r = unsettled(b, reg, h);
            }
          } catch (e) {
            output = undefined; // the unredacted value goes nowhere (SI-10)
            logFailure(host, h, "the output redactor", e);
            r = N.answer(reg, h, Answer.RedactorFailed, Date.now());
          }
          break;
        }
        case Kind.ExportOutput: {
          let text = "null";
          try {
            text = toJsonText(output);
          } catch {
            // no JSON form: the audit payload is null
          }
          r = N.answer(reg, h, Answer.OutputExported, Date.now(), text);
          break;
        }
        case Kind.Audit: {
          if (host.audit !== undefined) {
            const record = auditRecordFromRow(parseCoreJson(HOT.auditRow(reg, h)));
            try {
              host.audit(record);
            } catch {
              // A subscriber's failure does not change the call's outcome.
            }
          }
          if (span !== undefined) {
            const view = N.invokeTelemetry(reg, h);
            if (view !== null) span.finish(view);
          }
          r = HOT.answer(reg, h, Answer.Audited, Date.now());
          break;
        }
        case Kind.DoneOkHost:
          return { status: "ok", output };
        case Kind.Done:
          return outcome(parseCoreJson(N.invokeOutcome(reg, h)), output);
        case Kind.PersistApproval:
        case Kind.ConsumeApproval:
          // Only a store that waits (PostgreSQL) hands its steps back here:
          // the one asynchronous crossing, settled on this thread.
          r = await storeStep(reg, h);
          break;
        default:
          throw new CapabilityError("INTERNAL", `step ${kind} cannot be performed by this registry`);
      }
      kind = r % 16;
      aux = (r - kind) / 16;
    }
  } catch (e) {
    // The core ends the call (INTERNAL) and hands over the finished record
    // it still owes, so every call that started is audited as finished.
    const owed = N.invokeAbandon(reg, h, Date.now());
    if (owed !== null) {
      const { row, telemetry } = parseCoreJson(owed);
      try {
        host.audit?.(auditRecordFromRow(row));
      } catch {
        // A subscriber's failure does not change the call's outcome.
      }
      if (telemetry !== null) span?.finish(telemetry);
    }
    const error = fromNative(e);
    span?.endWithError(error instanceof CapabilityError ? error.code : "INTERNAL");
    throw error;
  }
}

function outcome(o: any, output: unknown): InvokeResult {
  switch (o.status) {
    case "ok":
      return { status: "ok", output: "output" in o ? o.output : output };
    case "approval_required":
      return { status: "approval_required", request: o.request };
    default:
      throw CapabilityError.fromJSON(o.error);
  }
}

export function redactionInfo(raw: any, context: unknown): RedactionInfo {
  const actor = raw.actor ?? {};
  return Object.freeze({
    surface: raw.surface,
    capabilityId: raw.capabilityId,
    actor: Object.freeze({
      ...actor,
      roles: Object.freeze([...(actor.roles ?? [])]) as string[],
      attributes: Object.freeze({ ...(actor.attributes ?? {}) }),
    }),
    context,
  });
}

async function evaluatePolicy(
  host: DriverHost,
  hooks: CapabilityHooks,
  h: number,
  aux: number,
  input: unknown,
  frame: Frame,
  signal: AbortSignal | undefined,
): Promise<number> {
  const reg = host.handle;
  const scope = aux % 2;
  const index = (aux - scope) / 2;
  const fn = scope === 0 ? host.runtimePolicies.get(index) : hooks.policies.get(index);
  if (fn === undefined) return N.answer(reg, h, Answer.PolicyFailed, Date.now());
  const timeoutMs = N.invokePolicyTimeout(reg, h);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const cancel = whenAborted(signal);
  try {
    // The frozen copies read the app's frame and context: a getter that
    // throws fails the policy (deny), as a policy that throws does.
    const context = frozenContext(frame.context);
    const request = Object.freeze({
      capability: Object.freeze({ id: hooks.id, meta: hooks.meta }),
      input,
      frame: frozenFrame(frame, context),
      context,
    });
    let d: PolicyDecision | Promise<PolicyDecision> = fn(request);
    if (isThenable(d)) {
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("policy timed out")), timeoutMs);
      });
      const got = await Promise.race([d, timedOut, cancel.aborted]);
      // The caller cancelled first: the core ends the call (CANCELLED).
      if (got === CANCELLED) return N.answer(reg, h, Answer.Cancelled, Date.now());
      d = got;
    }
    const x = d as any;
    const code =
      d && typeof d === "object" && typeof x.decision === "string" ? DECISION_CODE.get(x.decision) : undefined;
    // A decision with a field of the wrong type is no decision (a failed
    // policy, which denies), never one with a default in that field's place;
    // a number the core will not accept as an expiry is the core's to refuse.
    const fields = [field(x?.reason, "string"), field(x?.approvalType, "string"), field(x?.expiresInMs, "number")];
    if (code === undefined || fields.includes(BAD)) return N.answer(reg, h, Answer.PolicyFailed, Date.now());
    const [reason, approvalType, expiresInMs] = fields as [string | null, string | null, number | null];
    return N.answerPolicy(reg, h, code, reason, approvalType, expiresInMs, Date.now());
  } catch (e) {
    logFailure(host, h, `a policy (${scope === 0 ? "runtime" : "capability"} #${index})`, e);
    return N.answer(reg, h, Answer.PolicyFailed, Date.now());
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    cancel.dispose();
  }
}
