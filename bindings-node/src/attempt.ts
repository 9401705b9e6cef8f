/**
 * Stage 11 for the driver loop: one attempt of a capability's handler —
 * the oRPC procedure's own middleware chain and handler, raced against the
 * deadline the core named and the caller's signal.
 */
import {
  createORPCErrorConstructorMap,
  middlewareOutputFn,
  ORPCError,
  validateORPCError,
  type AnyProcedure,
} from "@orpc/server";

import { CapabilityError } from "./errors.js";
import { capabilityErrorsToORPC } from "./orpc-errors.js";
import { progressReporter, type ProgressListener, type ReportProgress } from "./progress.js";
import { Answer, Kind } from "./generated/protocol.js";
import { HOT, N } from "./native.js";
import type { CapabilityHooks } from "./declare.js";
import type { Timed } from "./deadlines.js";
import type { DriverHost } from "./driver.js";
import { errorClass, logFailure } from "./log.js";

export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && typeof v === "object" && typeof (v as any).then === "function";
}

/**
 * What oRPC calls an event iterator (`isAsyncIteratorObject` in
 * `@orpc/shared`): what an `async function*` handler returns.
 */
function isEventIterator(v: unknown): v is AsyncIterator<unknown, unknown> {
  return (
    v !== null &&
    typeof v === "object" &&
    typeof (v as any).next === "function" &&
    typeof (v as any)[Symbol.asyncIterator] === "function"
  );
}

/** Why a handler's signal aborted at the deadline. */
function deadlineReason(): Error {
  const e = new Error("The capability's deadline passed.");
  e.name = "TimeoutError";
  return e;
}

// ----- running an oRPC procedure without its validation ---------------------

/** What a governed call of a procedure needs of it, made once. */
interface Prepared {
  /** The handler's `errors` (oRPC's constructor map). */
  readonly errors: unknown;
  /**
   * The middlewares, without `capabilityErrorsToORPC`: that one converts a
   * thrown `CapabilityError` for oRPC's own HTTP handlers; in the governed
   * path the core reads the `CapabilityError` itself.
   */
  readonly middlewares: readonly any[];
}

const prepared = new WeakMap<AnyProcedure, Prepared>();

function prepare(procedure: AnyProcedure): Prepared {
  let p = prepared.get(procedure);
  if (p === undefined) {
    const def = procedure["~orpc"];
    p = {
      errors: createORPCErrorConstructorMap(def.errorMap),
      middlewares: def.middlewares.filter((m: unknown) => m !== capabilityErrorsToORPC),
    };
    prepared.set(procedure, p);
  }
  return p;
}

/**
 * The options object a middleware or handler receives, as oRPC builds it.
 * A class, not an object literal: a literal with `get` accessors is created
 * on V8's slow path, and this object is made once per middleware and
 * handler of every call. `signal` and `progress` are getters on the
 * prototype, so the AbortController behind the signal is made only if
 * someone reads it (a spread `{...options}` therefore does not copy them;
 * recorded in docs/decisions.md).
 */
class ProcedureOptions {
  readonly lastEventId = undefined;
  readonly #attempt: Attempt;

  constructor(
    readonly context: unknown,
    readonly input: unknown,
    readonly errors: unknown,
    readonly path: readonly string[],
    readonly procedure: AnyProcedure,
    attempt: Attempt,
  ) {
    this.#attempt = attempt;
  }

  get signal(): AbortSignal {
    return this.#attempt.signal();
  }

  get progress(): ReportProgress {
    return this.#attempt.progress();
  }
}

/**
 * A middleware's options: the procedure options and its `next`. Middlewares
 * composed with oRPC's `concat()` receive `{...options, next}`, a spread,
 * which does not copy the prototype's `signal` and `progress`: they see
 * them undefined, as in oRPC's own `call()` without a signal; the rest of
 * the chain and the handler still get both. (Own accessors on every
 * instance cost a quarter of the governed call; see docs/decisions.md.)
 */
class MiddlewareOptions extends ProcedureOptions {
  constructor(
    context: unknown,
    input: unknown,
    errors: unknown,
    path: readonly string[],
    procedure: AnyProcedure,
    attempt: Attempt,
    readonly next: (nextOptions?: {
      context?: Record<string, unknown>;
    }) => Promise<{ output: unknown; context: unknown }>,
  ) {
    super(context, input, errors, path, procedure, attempt);
  }
}

/**
 * Runs the procedure's own middleware chain and handler, as oRPC's
 * `executeProcedureInternal` does, without its input/output validation:
 * the core asks for validation once, at stages 4 and 12. Middlewares see
 * the validated input. Context merging follows oRPC (`next({context})`
 * merges into the current context).
 */
function runProcedure(hooks: CapabilityHooks, input: unknown, context: unknown, attempt: Attempt): unknown {
  const procedure = hooks.procedure;
  const def = procedure["~orpc"];
  const { errors, middlewares } = prepare(procedure);
  const path = hooks.path;
  const handler = (ctx: unknown) =>
    def.handler(new ProcedureOptions(ctx, input, errors, path, procedure, attempt) as any);
  if (middlewares.length === 0) return handler(context);
  const next = async (index: number, ctx: any): Promise<unknown> => {
    const mid = middlewares[index];
    if (mid === undefined) return handler(ctx);
    const options = new MiddlewareOptions(ctx, input, errors, path, procedure, attempt, async (nextOptions) => {
      const nextContext = nextOptions?.context ?? {};
      return {
        output: await next(index + 1, { ...ctx, ...nextContext }),
        context: nextContext,
      };
    });
    const result = await mid(options as any, input, middlewareOutputFn as any);
    return (result as { output: unknown }).output;
  };
  return next(0, context);
}

/**
 * Stage 11: one attempt. One timer, armed at the deadline the core named;
 * the handler's signal aborts at it or when the caller's signal aborts;
 * whatever the handler delivers after that is discarded.
 */
export class Attempt implements Timed {
  output: unknown = undefined;
  deadline = 0;
  prevDeadline: Timed | null = null;
  nextDeadline: Timed | null = null;
  #settled = false;
  #controller: AbortController | undefined = undefined;
  #aborted = false;
  #reason: unknown = undefined;
  #resolve: ((next: number) => void) | undefined = undefined;
  #onCallerAbort: (() => void) | undefined = undefined;

  constructor(
    readonly host: DriverHost,
    readonly h: number,
    readonly callerSignal: AbortSignal | undefined,
  ) {}

  /** The frame's progress listener, and the invocation's reporter (kept across retries). */
  onProgress: ProgressListener | undefined = undefined;
  report: ReportProgress | undefined = undefined;
  /** Values a streaming handler yielded in this attempt. */
  #yielded = 0;
  /** The event iterator a streaming handler returned, while it runs. */
  #stream: AsyncIterator<unknown, unknown> | undefined = undefined;

  /** The handler's `progress(done, total?)`, made on first read (see progress.ts). */
  progress(): ReportProgress {
    this.report ??= progressReporter(this.onProgress);
    return this.report;
  }

  /** The handler's signal, made on first read. */
  signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#listenToCaller(); // a handler that watches its signal hears the caller at once
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  #abort(reason: unknown): void {
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    this.#stopStream();
  }

  /**
   * Asks a streaming handler's generator to stop: `return()` takes effect
   * at its next `yield` (its `finally` runs then); until then it runs on,
   * its signal aborted.
   */
  #stopStream(): void {
    const stream = this.#stream;
    this.#stream = undefined;
    if (stream?.return === undefined) return;
    try {
      Promise.resolve(stream.return(undefined)).catch(() => {});
    } catch {
      // A generator that throws while stopping has nothing more to say.
    }
  }

  /** Settles once; false if the timer or the caller got there first. */
  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.host.deadlines.remove(this);
    if (this.#onCallerAbort !== undefined) this.callerSignal?.removeEventListener("abort", this.#onCallerAbort);
    return true;
  }

  /**
   * Listens to the caller's abort signal from now on (once). Deferred to
   * the end of the turn (`afterTurn`) or the handler's first read of its
   * own signal: until then an abort is seen when the handler settles
   * (`ok`/`failed` check `aborted`), which gives the same answer as a
   * listener would, since an abort event is dispatched synchronously.
   */
  #listenToCaller(): void {
    const caller = this.callerSignal;
    if (caller === undefined || this.#onCallerAbort !== undefined || this.#settled) return;
    this.#onCallerAbort = () => this.cancelled();
    if (caller.aborted) {
      this.cancelled();
      return;
    }
    caller.addEventListener("abort", this.#onCallerAbort, { once: true });
  }

  afterTurn(): void {
    this.#listenToCaller();
  }

  run(hooks: CapabilityHooks, deadlineAt: number, input: unknown, context: unknown): Promise<number> {
    return new Promise<number>((resolve) => {
      this.#resolve = resolve;
      this.deadline = deadlineAt;
      this.host.deadlines.add(this);
      const caller = this.callerSignal;
      if (caller !== undefined) {
        if (caller.aborted) return this.cancelled();
        this.host.deadlines.watchTurn();
      }
      let p: unknown;
      try {
        p = runProcedure(hooks, input, context, this);
      } catch (e) {
        return this.thrown(hooks.procedure, e);
      }
      if (isThenable(p)) {
        p.then(
          (o) => this.#delivered(hooks.procedure, o),
          (e) => this.thrown(hooks.procedure, e),
        );
      } else {
        this.#delivered(hooks.procedure, p);
      }
    });
  }

  /** What the handler returned: an output, or a stream to consume. */
  #delivered(procedure: AnyProcedure, o: unknown): void {
    let stream: boolean;
    try {
      stream = isEventIterator(o);
    } catch (e) {
      this.thrown(procedure, e); // a getter of the handler's value threw
      return;
    }
    if (stream) void this.#consume(procedure, o as AsyncIterator<unknown, unknown>);
    else this.ok(o);
  }

  /**
   * A streaming handler (an oRPC event iterator): each value it yields is
   * a progress report (`done` = values this attempt yielded, checked by
   * the core like any report, so after a retry the count is dropped until
   * it passes the furthest report; no payload leaves before validation
   * and redaction), and its output is the value it returns, else the last
   * it yielded. The deadline and the caller's abort stop the generator
   * (its signal aborts at once; `return()` ends it at its next `yield`).
   */
  async #consume(procedure: AnyProcedure, stream: AsyncIterator<unknown, unknown>): Promise<void> {
    this.#stream = stream;
    if (this.#settled) {
      // The deadline or the caller ended the attempt before the handler
      // handed over its iterator: it never starts.
      this.#stopStream();
      return;
    }
    let last: unknown;
    try {
      for (;;) {
        const step = await stream.next();
        if (this.#settled) {
          this.#stopStream(); // the deadline or the caller ended the attempt first
          return;
        }
        if (step.done === true) {
          this.#stream = undefined;
          this.ok(step.value === undefined ? last : step.value);
          return;
        }
        last = step.value;
        this.#yielded += 1;
        this.progress()(this.#yielded);
      }
    } catch (e) {
      this.#stream = undefined;
      this.thrown(procedure, e);
    }
  }

  ok(output: unknown): void {
    if (this.callerSignal?.aborted) {
      this.cancelled();
      return;
    }
    if (!this.#settle()) return;
    this.output = output;
    let next: number;
    try {
      next = HOT.answer(this.host.handle, this.h, Answer.HandlerOk, Date.now());
    } catch {
      next = Kind.Done; // the registry was closed under the call: the loop reads INTERNAL
    }
    this.#resolve!(next);
  }

  /**
   * The handler threw. An `ORPCError` first goes through oRPC's own
   * `validateORPCError` against the procedure's `.errors({...})`, as
   * oRPC's `call` does: that decides `defined` (a declared code whose
   * status and data match), which the core reads.
   */
  thrown(procedure: AnyProcedure, err: unknown): void {
    if (!(err instanceof ORPCError)) {
      this.failed(err);
      return;
    }
    validateORPCError(procedure["~orpc"].errorMap, err).then(
      (e) => this.failed(e),
      // The data's validator threw: not shown as declared.
      () => this.failed(new ORPCError(err.code, { status: err.status, message: err.message, cause: err })),
    );
  }

  failed(err: unknown): void {
    if (this.callerSignal?.aborted) {
      this.cancelled();
      return;
    }
    if (!this.#settle()) return;
    this.#answer(0, err);
  }

  /** The deadline passed (called by the registry's `Deadlines`). */
  expire(): void {
    // The caller aborted first (in a turn whose end has not come yet, so no
    // listener heard it): CANCELLED, as an eager listener would have said.
    if (this.callerSignal?.aborted) {
      this.cancelled();
      return;
    }
    if (!this.#settle()) return;
    this.#abort(deadlineReason());
    this.#answer(1, undefined);
  }

  cancelled(): void {
    if (!this.#settle()) return;
    this.#abort(this.callerSignal?.reason);
    this.#answer(2, undefined);
  }

  /** 0: the handler failed with `err`; 1: timed out; 2: cancelled. */
  #answer(how: 0 | 1 | 2, err: unknown): void {
    const reg = this.host.handle;
    let next: number;
    try {
      // The operator's log gets what the caller was not shown: not a
      // CapabilityError or a declared oRPC error (the procedure's own outcomes).
      if (how === 0 && !(err instanceof CapabilityError) && !(err instanceof ORPCError && err.defined === true))
        logFailure(this.host, this.h, "the handler", err);
      next =
        how === 0
          ? answerError(reg, this.h, err)
          : how === 1
            ? N.answer(reg, this.h, Answer.HandlerTimedOut, Date.now())
            : N.answer(reg, this.h, Answer.Cancelled, Date.now());
    } catch {
      next = Kind.Done; // the registry was closed under the call: the loop reads INTERNAL
    }
    this.#resolve!(next);
  }
}

function answerError(reg: number, h: number, err: unknown): number {
  if (err instanceof CapabilityError) {
    return N.answerHandlerError(reg, h, err.code, err.message, err.retryable, Date.now());
  }
  if (err instanceof ORPCError) {
    // Its fields only: the core's table (core/src/orpc_error.rs) decides
    // the code, whether it is retryable and whether the message is shown.
    const status = Number.isInteger(err.status) && err.status >= 0 ? err.status : null;
    const message = typeof err.message === "string" ? err.message : "";
    return N.answerHandlerOrpcError(reg, h, String(err.code), status, err.defined === true, message, Date.now());
  }
  // A plain throw: EXECUTION_FAILED with the core's generic message. Only
  // the error's class is passed on, for the operator's audit record; the
  // thrown text may quote data (SI-10) and goes to the logger instead.
  return N.answerHandlerError(reg, h, null, errorClass(err), false, Date.now());
}
