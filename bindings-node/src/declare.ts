/**
 * From an oRPC router to the core's JSON declarations: walk the router
 * (nested and lazy), keep procedures with `agent` meta, and replace host
 * functions by declared-present markers (docs/decisions.md "Host-only hooks
 * are markers"). The functions stay here, keyed by capability index and
 * policy position; the core validates everything else.
 */
import { getEventIteratorSchemaDetails } from "@orpc/contract";
import { isLazy, isProcedure, unlazy, type AnyProcedure, type Builder } from "@orpc/server";

import type { AgentMeta, AgentPolicy, AgentProcedureMeta, PolicyFunction } from "./types.js";
import { capabilityErrorsToORPC } from "./orpc-errors.js";
import { jsonSchemaOf, type StandardSchema } from "./schema.js";

/**
 * Types `.meta({ agent: {...} })` on every procedure built from `base`:
 *
 * ```ts
 * const agentBase = agentProcedure(os.$context<AppContext>());
 * const search = agentBase.meta({ agent: { description, expose, sideEffect, risk } })…
 * ```
 *
 * Existing meta of `base` is kept; only the meta type gains `agent`. The
 * base's first middleware is `capabilityErrorsToORPC`: a `CapabilityError`
 * a handler throws reaches clients of oRPC's own HTTP handlers as an
 * `ORPCError` (a governed call skips it).
 */
export function agentProcedure<
  TInitialContext extends Record<PropertyKey, any>,
  TCurrentContext extends Record<PropertyKey, any>,
  // biome-ignore lint/correctness/noUnusedVariables: part of the public signature (explicit type arguments name six)
  TInputSchema,
  // biome-ignore lint/correctness/noUnusedVariables: as above
  TOutputSchema,
  TErrorMap extends Record<string, any>,
  TMeta extends Record<PropertyKey, any>,
>(
  base: Builder<TInitialContext, TCurrentContext, any, any, TErrorMap, TMeta>,
): Builder<TInitialContext, TCurrentContext, any, any, TErrorMap, TMeta & AgentProcedureMeta> {
  const initial = (base as any)["~orpc"]?.meta ?? {};
  return (base as any).$meta(initial).use(capabilityErrorsToORPC);
}

/** The host functions of one capability. */
export interface CapabilityHooks {
  readonly id: string;
  readonly meta: AgentMeta;
  readonly procedure: AnyProcedure;
  readonly path: readonly string[];
  readonly inputSchema: StandardSchema | undefined;
  readonly outputSchema: StandardSchema | undefined;
  /** Host policies by their position in `meta.policies`. */
  readonly policies: ReadonlyMap<number, PolicyFunction>;
}

/** A procedure found in the router with its `agent` meta. */
export interface FoundProcedure {
  path: string[];
  procedure: AnyProcedure;
  agent: unknown;
}

/**
 * Every procedure of `router` that has `agent` meta, depth first in key
 * order, lazy routers resolved (awaited) on the way.
 */
export async function collectProcedures(router: unknown): Promise<FoundProcedure[]> {
  const found: FoundProcedure[] = [];
  const walk = async (node: unknown, path: string[]): Promise<void> => {
    if (isLazy(node)) {
      const { default: resolved } = await unlazy(node as any);
      return walk(resolved, path);
    }
    if (isProcedure(node)) {
      const agent = (node as AnyProcedure)["~orpc"].meta?.agent;
      if (agent !== undefined) found.push({ path, procedure: node as AnyProcedure, agent });
      return;
    }
    if (node !== null && (typeof node === "object" || typeof node === "function")) {
      for (const key of Object.keys(node)) await walk((node as any)[key], [...path, key]);
    }
  };
  await walk(router, []);
  return found;
}

function policyMarker(p: AgentPolicy, i: number, fns: Map<number, PolicyFunction>): unknown {
  if (typeof p === "function") {
    fns.set(i, p as PolicyFunction);
    return p.name ? { host: true, name: p.name } : { host: true };
  }
  if (p && typeof p === "object" && typeof (p as any).evaluate === "function") {
    const { evaluate, ...rest } = p as any;
    // Called as the object's method: `this` is the policy (a class's
    // fields, `#private` state, a helper method).
    fns.set(i, evaluate.bind(p));
    if (Object.getPrototypeOf(p) === Object.prototype) return { ...rest, host: true }; // an unknown key is a problem
    // A class instance: its own fields are its state, not policy fields;
    // `name` and `mode` may be getters.
    const { name, mode } = p as any;
    return { host: true, ...(name === undefined ? {} : { name }), ...(mode === undefined ? {} : { mode }) };
  }
  return p;
}

/** A policy list with functions replaced by markers. */
export function policiesToJson(list: unknown, fns: Map<number, PolicyFunction>): unknown {
  return Array.isArray(list) ? list.map((p, i) => policyMarker(p, i, fns)) : list;
}

const isFn = (v: unknown): boolean => typeof v === "function";

/** `AgentMeta` as the core reads it: functions become `true` markers. */
export function metaToJson(meta: any, fns: Map<number, PolicyFunction>): unknown {
  if (meta === null || typeof meta !== "object") return meta;
  const out: any = { ...meta };
  if (meta.redact && typeof meta.redact === "object") {
    out.redact = { ...meta.redact };
    if (isFn(meta.redact.output)) out.redact.output = true;
    if (isFn(meta.redact.approvalInput)) out.redact.approvalInput = true;
  }
  if (meta.retry && typeof meta.retry === "object") {
    out.retry = { ...meta.retry };
    if (isFn(meta.retry.retryOn)) out.retry.retryOn = true;
  }
  if ("policies" in meta) out.policies = policiesToJson(meta.policies, fns);
  return out;
}

/**
 * The schema of the value the core validates as the output. A streaming
 * procedure's `.output(eventIterator(yields, returns?))` validates an
 * iterator; its output (what the generator returns, else what it yielded
 * last) is validated with `returns`, else `yields`.
 */
function finalValueSchema(schema: unknown): StandardSchema | undefined {
  const stream = getEventIteratorSchemaDetails(schema as Parameters<typeof getEventIteratorSchemaDetails>[0]);
  if (stream === undefined) return schema as StandardSchema | undefined;
  return (stream.returns ?? stream.yields) as StandardSchema | undefined;
}

/** One declaration for the core plus the hooks kept here. */
export function declare(found: FoundProcedure): { decl: unknown; hooks: CapabilityHooks } {
  const id = found.path.join(".");
  const def = found.procedure["~orpc"];
  const inputSchema = def.inputSchema as StandardSchema | undefined;
  const outputSchema = finalValueSchema(def.outputSchema);
  const policies = new Map<number, PolicyFunction>();
  const meta = found.agent as any;
  const inputJson = jsonSchemaOf(inputSchema, "input");
  // What policies read is the validated value (zod's output side, after
  // transforms and defaults): when it differs from what callers send, the
  // core type-checks Cedar against it (`null`: it cannot be described).
  const validatedJson = inputSchema === undefined ? undefined : jsonSchemaOf(inputSchema, "output");
  const validated =
    inputSchema !== undefined && JSON.stringify(validatedJson) !== JSON.stringify(inputJson)
      ? { validatedInputSchema: validatedJson ?? null }
      : {};
  const decl = {
    id,
    meta: metaToJson(found.agent, policies),
    ...validated,
    inputSchema: inputJson,
    outputSchema: jsonSchemaOf(outputSchema, "output"),
    validateInput: inputSchema !== undefined,
    validateOutput: outputSchema !== undefined,
    // The hooks held here: a hook the metadata declares without one (a
    // literal `redact.output: true`, `{ host: true }`) is the core's
    // MISSING_HOOK problem at build, reported with all the others.
    hostHooks: {
      redactOutput: isFn(meta?.redact?.output),
      redactApprovalInput: isFn(meta?.redact?.approvalInput),
      retryOn: isFn(meta?.retry?.retryOn),
      policies: [...policies.keys()],
    },
  };
  return {
    decl,
    hooks: {
      id,
      meta: found.agent as AgentMeta,
      procedure: found.procedure,
      path: Object.freeze([...found.path]),
      inputSchema,
      outputSchema,
      policies,
    },
  };
}
