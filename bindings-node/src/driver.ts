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
import { middlewareOutputFn, createORPCErrorConstructorMap, type AnyProcedure } from "@orpc/server";

import { CapabilityError, fromNative } from "./errors.js";
import { Kind, N } from "./native.js";
import { issuesMessage, type StandardResult } from "./schema.js";
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
}

const EMPTY_CONTEXT = Object.freeze({});

/** Why a handler's signal aborted at the deadline. */
function deadlineReason(): Error {
  const e = new Error("The capability's deadline passed.");
  e.name = "TimeoutError";
  return e;
}

// ----- running an oRPC procedure without its validation ---------------------

const errorMaps = new WeakMap<AnyProcedure, unknown>();

function errorsOf(procedure: AnyProcedure): unknown {
  let m = errorMaps.get(procedure);
  if (m === undefined) {
    m = createORPCErrorConstructorMap(procedure["~orpc"].errorMap);
    errorMaps.set(procedure, m);
  }
  return m;
}

/**
 * Runs the procedure's own middleware chain and handler, as oRPC's
 * `executeProcedureInternal` does, without its input/output validation:
 * the core asks for validation once, at stages 4 and 12. Middlewares see
 * the validated input. Context merging follows oRPC (`next({context})`
 * merges into the current context).
 */
function runProcedure(
  hooks: CapabilityHooks,
  input: unknown,
  context: unknown,
  signal: AbortSignal,
): unknown {
  const procedure = hooks.procedure;
  const def = procedure["~orpc"];
  const middlewares = def.middlewares;
  const base = {
    input,
    errors: errorsOf(procedure),
    path: hooks.path,
    procedure,
    signal,
    lastEventId: undefined,
  };
  if (middlewares.length === 0) {
    return def.handler({ ...base, context } as any);
  }
  const next = async (index: number, ctx: any): Promise<unknown> => {
    const mid = middlewares[index];
    if (mid === undefined) return def.handler({ ...base, context: ctx } as any);
    const result = await mid(
      {
        ...base,
        context: ctx,
        next: async (nextOptions?: { context?: Record<string, unknown> }) => {
          const nextContext = nextOptions?.context ?? {};
          return {
            output: await next(index + 1, { ...ctx, ...nextContext }),
            context: nextContext,
          };
        },
      } as any,
      input,
      middlewareOutputFn as any,
    );
    return (result as { output: unknown }).output;
  };
  return next(0, context);
}

// ----- host answers -----------------------------------------------------------

const DECISION_CODE: Record<string, number> = { allow: 0, deny: 1, requireApproval: 2, abstain: 3 };

function frozenFrame(frame: Frame): FrozenFrame {
  const actor = frame.actor ?? {};
  return Object.freeze({
    surface: frame.surface,
    actor: Object.freeze({
      ...actor,
      roles: Object.freeze([...(actor.roles ?? [])]) as string[],
      attributes: Object.freeze({ ...(actor.attributes ?? {}) }),
    }),
    context: frame.context,
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

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && typeof v === "object" && typeof (v as any).then === "function";
}

/**
 * One governed invocation. `start` is the packed result of
 * `invokeStart`/`invokeStartName`/`resumeStart`; `input` the caller's raw
 * input (`undefined` on resume: the core holds the stored input).
 */
export async function drive(
  host: DriverHost,
  start: number,
  capIndex: number | undefined,
  input: unknown,
  frame: Frame,
): Promise<InvokeResult> {
  const reg = host.handle;
  let kind = start % 16;
  const h = (start - kind) / 16;
  let aux = 0;
  let r = 0;
  let value = input;
  let output: unknown;
  let fromCore = capIndex === undefined;
  let hooks: CapabilityHooks | undefined = capIndex === undefined ? undefined : host.caps[capIndex];
  const context = frame.context ?? EMPTY_CONTEXT;
  const signal = frame.signal;
  if (kind === Kind.RunHandler) aux = N.invokeDeadline(reg, h);
  const cap = (): CapabilityHooks => {
    if (hooks === undefined) {
      const i = N.invokeCapability(reg, h);
      hooks = host.caps[i];
      if (hooks === undefined) throw new CapabilityError("INTERNAL", "no capability for this step");
    }
    return hooks;
  };
  try {
    for (;;) {
      switch (kind) {
        case Kind.ValidateInput: {
          let res = cap().inputSchema!["~standard"].validate(value) as StandardResult | Promise<StandardResult>;
          if (isThenable(res)) res = await res;
          if (res.issues) {
            r = N.answerInputInvalid(reg, h, issuesMessage(res.issues), Date.now());
          } else {
            value = res.value;
            r = N.answerInputValid(reg, h, Date.now());
          }
          break;
        }
        case Kind.EvaluatePolicy:
          r = await evaluatePolicy(host, cap(), h, aux, value, frame);
          break;
        case Kind.ExportInput:
          try {
            r = N.answerInputExported(reg, h, value as any, Date.now());
          } catch (e) {
            const text = e instanceof Error ? e.message : String(e);
            r = N.answerInputNotExportable(reg, h, text, Date.now());
          }
          break;
        case Kind.RunHandler: {
          if (fromCore) {
            // A resumed call: the handler gets the stored validated input.
            const text = N.invokeInputJson(reg, h);
            value = text == null ? undefined : JSON.parse(text);
            fromCore = false;
          }
          r = await runHandler(host, cap(), h, aux, value, context, signal, (o) => {
            output = o;
          });
          break;
        }
        case Kind.AskRetryOn: {
          const error = CapabilityError.fromJSON(JSON.parse(N.invokeRetryError(reg, h)));
          let retry = false;
          try {
            retry = cap().meta.retry?.retryOn?.(error) === true;
          } catch {
            retry = false; // a throwing predicate does not retry
          }
          r = N.answerRetryOn(reg, h, retry, Date.now());
          break;
        }
        case Kind.Sleep: {
          const aborted = await sleep(aux, signal);
          r = aborted ? N.answerCancelled(reg, h, Date.now()) : N.answerSlept(reg, h, Date.now());
          break;
        }
        case Kind.ValidateOutput: {
          let res: StandardResult | Promise<StandardResult>;
          try {
            res = cap().outputSchema!["~standard"].validate(output) as StandardResult | Promise<StandardResult>;
            if (isThenable(res)) res = await res;
          } catch {
            res = { issues: [{ message: "the output validator threw" }] };
          }
          if (res.issues) {
            output = undefined;
            r = N.answerOutputInvalid(reg, h, Date.now());
          } else {
            output = res.value;
            r = N.answerOutputValid(reg, h, Date.now());
          }
          break;
        }
        case Kind.RedactOutput: {
          const info = redactionInfo(JSON.parse(N.invokeRedactionInfo(reg, h)), context);
          try {
            let red = cap().meta.redact!.output!(output, info);
            if (isThenable(red)) red = await red;
            output = red;
            r = N.answerRedacted(reg, h, Date.now());
          } catch {
            output = undefined; // the unredacted value goes nowhere (SI-10)
            r = N.answerRedactorFailed(reg, h, Date.now());
          }
          break;
        }
        case Kind.ExportOutput:
          try {
            r = N.answerOutputExported(reg, h, output as any, Date.now());
          } catch {
            r = N.answerOutputExported(reg, h, null, Date.now());
          }
          break;
        case Kind.Audit: {
          const record = JSON.parse(N.invokeAuditRecord(reg, h)) as AuditRecord;
          try {
            host.audit?.(record);
          } catch {
            // A subscriber's failure does not change the call's outcome.
          }
          r = N.answerAudited(reg, h, Date.now());
          break;
        }
        case Kind.DoneOkHost:
          return { status: "ok", output };
        case Kind.Done:
          return outcome(JSON.parse(N.invokeOutcome(reg, h)), output);
        default:
          // Store steps of a store that waits: not available synchronously.
          throw new CapabilityError("INTERNAL", `step ${kind} cannot be performed by this registry`);
      }
      kind = r % 16;
      aux = (r - kind) / 16;
    }
  } catch (e) {
    N.invokeAbandon(reg, h);
    throw fromNative(e);
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
): Promise<number> {
  const reg = host.handle;
  const scope = aux % 2;
  const index = (aux - scope) / 2;
  const fn = scope === 0 ? host.runtimePolicies.get(index) : hooks.policies.get(index);
  if (fn === undefined) return N.answerPolicyFailed(reg, h, Date.now());
  const timeoutMs = N.invokePolicyTimeout(reg, h);
  const request = Object.freeze({
    capability: Object.freeze({ id: hooks.id, meta: hooks.meta }),
    input,
    frame: frozenFrame(frame),
    context: frame.context,
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    let d: PolicyDecision | Promise<PolicyDecision> = fn(request);
    if (isThenable(d)) {
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("policy timed out")), timeoutMs);
      });
      d = await Promise.race([d, timedOut]);
    }
    const code = d && typeof d === "object" ? DECISION_CODE[(d as any).decision] : undefined;
    if (code === undefined) return N.answerPolicyFailed(reg, h, Date.now());
    const x = d as any;
    return N.answerPolicy(
      reg,
      h,
      code,
      typeof x.reason === "string" ? x.reason : null,
      typeof x.approvalType === "string" ? x.approvalType : null,
      typeof x.expiresInMs === "number" ? x.expiresInMs : null,
      Date.now(),
    );
  } catch {
    return N.answerPolicyFailed(reg, h, Date.now());
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/**
 * Stage 11: one attempt. One timer per attempt, armed at the deadline the
 * core named; the handler's signal aborts at it or when the caller's
 * signal aborts; whatever arrives after that is discarded.
 */
function runHandler(
  host: DriverHost,
  hooks: CapabilityHooks,
  h: number,
  deadlineAt: number,
  input: unknown,
  context: unknown,
  callerSignal: AbortSignal | undefined,
  keep: (output: unknown) => void,
): Promise<number> {
  const reg = host.handle;
  return new Promise<number>((resolve) => {
    const controller = new AbortController();
    let settled = false;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      controller.abort(callerSignal?.reason);
      resolve(N.answerCancelled(reg, h, Date.now()));
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      callerSignal?.removeEventListener("abort", onAbort);
      controller.abort(deadlineReason());
      resolve(N.answerHandlerTimedOut(reg, h, Date.now()));
    }, Math.max(0, deadlineAt - Date.now()));
    if (callerSignal !== undefined) {
      if (callerSignal.aborted) return onAbort();
      callerSignal.addEventListener("abort", onAbort, { once: true });
    }
    const done = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      callerSignal?.removeEventListener("abort", onAbort);
      return true;
    };
    const ok = (out: unknown) => {
      if (!done()) return;
      keep(out);
      resolve(answerOk(reg, h));
    };
    const fail = (err: unknown) => {
      if (!done()) return;
      resolve(answerError(reg, h, err));
    };
    try {
      const p = runProcedure(hooks, input, context, controller.signal);
      if (isThenable(p)) p.then(ok, fail);
      else ok(p);
    } catch (e) {
      fail(e);
    }
  });
}

function answerOk(reg: number, h: number): number {
  try {
    return N.answerHandlerOk(reg, h, Date.now());
  } catch (e) {
    throw fromNative(e);
  }
}

function answerError(reg: number, h: number, err: unknown): number {
  if (err instanceof CapabilityError) {
    return N.answerHandlerError(reg, h, err.code, err.message, err.retryable, Date.now());
  }
  // A plain throw: EXECUTION_FAILED with the core's generic message; the
  // thrown text is not passed on (it may quote data, SI-10).
  return N.answerHandlerError(reg, h, null, "", false, Date.now());
}
