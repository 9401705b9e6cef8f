/**
 * Running an oRPC procedure without its validation, for an attempt
 * (`attempt.ts`): the procedure's own middleware chain and handler, called
 * with the options objects oRPC builds (the handler's context: its input,
 * errors, path, and a signal and progress reporter made on first read),
 * and the check whether the handler returned an event iterator (a stream).
 * Apart from the attempt, which only races what this returns.
 */
import { createORPCErrorConstructorMap, middlewareOutputFn, type AnyProcedure } from "@orpc/server";

import { capabilityErrorsToORPC } from "./orpc-errors.js";
import type { ReportProgress } from "./progress.js";
import type { CapabilityHooks } from "./declare.js";
import type { Attempt } from "./attempt.js";

/**
 * What oRPC calls an event iterator (`isAsyncIteratorObject` in
 * `@orpc/shared`): what an `async function*` handler returns.
 */
export function isEventIterator(v: unknown): v is AsyncIterator<unknown, unknown> {
  return (
    v !== null &&
    typeof v === "object" &&
    typeof (v as any).next === "function" &&
    typeof (v as any)[Symbol.asyncIterator] === "function"
  );
}

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
export function runProcedure(hooks: CapabilityHooks, input: unknown, context: unknown, attempt: Attempt): unknown {
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
