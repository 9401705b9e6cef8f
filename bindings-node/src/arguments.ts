/**
 * Checks of the public API's arguments, so a wrong one fails in the
 * library's own words: a `TypeError` naming the argument and what it should
 * be (never napi's "Failed to convert JavaScript value … into rust type …",
 * which also quotes the value). Conversions only — what a value means is
 * the core's; the messages name types, never values (a value may be data).
 */

import { LONE_SURROGATE, requireWellFormed } from "./json.js";

/** The TypeErrors made here: `fromNative` passes them on as they are. */
const argumentErrors = new WeakSet<object>();

export function isArgumentError(e: unknown): e is TypeError {
  return typeof e === "object" && e !== null && argumentErrors.has(e);
}

/** What kind of value `v` is, for a message (never the value itself). */
function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  switch (typeof v) {
    case "object":
      return "an object";
    case "undefined":
      return "undefined";
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "bigint":
      return "a bigint";
    case "boolean":
      return "a boolean";
    case "function":
      return "a function";
    default:
      return `a ${typeof v}`;
  }
}

/** `fn: what must be expected; got <kind>.` as a TypeError. */
export function argumentError(fn: string, what: string, expected: string, got: unknown): TypeError {
  const e = new TypeError(`${fn}: ${what} must be ${expected}; got ${kindOf(got)}.`);
  argumentErrors.add(e);
  return e;
}

function plainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function requireString(fn: string, what: string, v: unknown): string {
  if (typeof v !== "string") throw argumentError(fn, what, "a string", v);
  return v;
}

/** A string, or nothing (`undefined` or `null`). */
export function optionalString(fn: string, what: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw argumentError(fn, what, "a string", v);
  return v;
}

/**
 * An options object (`undefined` and `null` are none). `strict`: only the
 * `keys` named, so a misspelt option fails instead of being ignored (where
 * ignoring it would widen what the call does: a list filter, a decision).
 */
export function optionsObject(
  fn: string,
  what: string,
  v: unknown,
  keys: readonly string[],
  strict = false,
): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!plainObject(v)) throw argumentError(fn, what, `an object ({ ${keys.join(", ")} })`, v);
  if (!strict) return v;
  for (const key of Object.keys(v)) {
    if (!keys.includes(key)) {
      const e = new TypeError(`${fn}: ${what} has no option \`${key}\`; the options are ${keys.join(", ")}.`);
      argumentErrors.add(e);
      throw e;
    }
  }
  return v;
}

/** `fn: what has no field \`key\`; the fields are …`: a misspelt field fails in these words, never ignored. */
export function unknownFieldError(fn: string, what: string, key: string, fields: Iterable<string>): TypeError {
  const e = new TypeError(`${fn}: ${what} has no field \`${key}\`; the fields are ${[...fields].join(", ")}.`);
  argumentErrors.add(e);
  return e;
}

/** An `AbortSignal` or nothing. */
export function optionalSignal(fn: string, what: string, v: unknown): void {
  // Every MCP and gateway call carries the transport's signal: the common
  // case is decided by its class, without reading its accessors.
  if (v === undefined || v instanceof AbortSignal) return;
  const s = v as { aborted?: unknown; addEventListener?: unknown } | null;
  if (
    s === null ||
    typeof s !== "object" ||
    typeof s.aborted !== "boolean" ||
    typeof s.addEventListener !== "function"
  ) {
    throw argumentError(fn, what, "an AbortSignal", v);
  }
}

export function optionalFunction(fn: string, what: string, v: unknown): void {
  if (v !== undefined && typeof v !== "function") throw argumentError(fn, what, "a function", v);
}

const DECIDE_KEYS = ["approver", "reason"] as const;

/**
 * The approver and reason of `approvals.approve/reject`. An approver is its
 * id — a string, or an actor `{id}` (the frame's actor, as apps hold it).
 */
export function decideArguments(
  fn: string,
  id: unknown,
  options: unknown,
): { id: string; approver: string | null; reason: string | null } {
  requireString(fn, "the request id", id);
  const o = optionsObject(fn, "options", options, DECIDE_KEYS, true);
  let approver: string | null = null;
  const a = o.approver;
  if (typeof a === "string") {
    approver = a;
  } else if (plainObject(a) && typeof a.id === "string") {
    approver = a.id;
  } else if (a !== undefined && a !== null) {
    throw argumentError(fn, "options.approver", 'an approver id (a string) or an actor with an id ({ id: "…" })', a);
  }
  // A lone surrogate has no UTF-8 form: the decision would record another
  // approver (U+FFFD), whom `approverMustDiffer` could not tell apart.
  if (approver !== null && LONE_SURROGATE.test(approver)) {
    throw argumentError(fn, "options.approver", "an approver id of well-formed text (no lone surrogate)", a);
  }
  const reason = optionalString(fn, "options.reason", o.reason) ?? null;
  if (reason !== null && LONE_SURROGATE.test(reason)) {
    throw argumentError(fn, "options.reason", "a reason of well-formed text (no lone surrogate)", reason);
  }
  return { id: id as string, approver, reason };
}

const FILTER_KEYS = ["capabilityId", "actorId", "surface", "status", "limit", "cursor"] as const;

/**
 * A list filter as the JSON the core reads (`ffi::list_filter_from_json`,
 * which refuses unknown keys, statuses and surfaces itself). A wrong type
 * or a misspelt key fails here first, in this API's words.
 */
export function listFilterJson(fn: string, filter: unknown): string {
  const f = optionsObject(fn, "the filter", filter, FILTER_KEYS, true);
  const out: Record<string, unknown> = {};
  for (const key of ["capabilityId", "actorId", "surface", "status", "cursor"] as const) {
    const v = optionalString(fn, `filter.${key}`, f[key]);
    // Text with no UTF-8 form is refused naming the key, in Python's words
    // (the filter's JSON would otherwise not read back).
    if (v !== undefined) requireWellFormed(v, `/${key}`);
    if (v !== undefined) out[key] = v;
  }
  const limit = f.limit;
  if (limit !== undefined && limit !== null) {
    // Any whole number ≥ 0, as in Python (the store caps the page size).
    if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 0) {
      throw argumentError(fn, "filter.limit", "a whole number ≥ 0 (0: the default page size)", limit);
    }
    out.limit = limit;
  }
  return JSON.stringify(out);
}
