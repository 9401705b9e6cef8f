/**
 * How a governed call crosses into the core, for `registry.invoke` and
 * `registry.resume`: its actor as a bare id, and its raw input as the JSON
 * text the core measures against the input limits; and the span of a call
 * that never crossed. Conversions only. The frame's JSON text and fields
 * are in `frame-crossing.ts`.
 */
import { CapabilityError } from "./errors.js";
import { LONE_SURROGATE } from "./json.js";
import { MAX_HASH_DEPTH } from "./generated/protocol.js";
import { SHORT_INPUT_TEXT } from "./native.js";
import type { CallSpan } from "./telemetry.js";
import type { Frame } from "./types.js";

/**
 * The JSON pointer (under `path`) of the first NaN or infinite number (or
 * `Number` object holding one) in `v`, which `JSON.stringify` writes as
 * `null`. A walk of at most the core's depth: a cycle, or deeper nesting,
 * is left to the JSON writer's own refusal.
 */
function firstNonFinite(v: unknown, path = "", depth = 0): string | undefined {
  if (typeof v === "number" || v instanceof Number) return Number.isFinite(Number(v)) ? undefined : path;
  if (typeof v !== "object" || v === null || depth >= MAX_HASH_DEPTH) return undefined;
  for (const [key, item] of Object.entries(v)) {
    const at = firstNonFinite(item, `${path}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`, depth + 1);
    if (at !== undefined) return at;
  }
  return undefined;
}

/** JSON nested deeper than any input may be (see `rawInputText`). */
const TOO_DEEP_TEXT = "[".repeat(SHORT_INPUT_TEXT) + "]".repeat(SHORT_INPUT_TEXT);

/**
 * An input holding a NaN or infinity: where (a JSON pointer), and its JSON
 * text when long enough to measure. The core refuses it after the limits
 * (`ffi::measured_input`): the value a handler would get is not the `null`
 * the core would hold.
 */
export class NonFiniteInput {
  constructor(
    readonly at: string,
    readonly text: string | undefined,
  ) {}
}

/**
 * The raw input's JSON text for the core's input limits, or `undefined`
 * when it has none (`undefined` itself, a BigInt, a cycle: values only
 * in-process code can hand over; transports deliver JSON), or where it
 * holds a non-finite number (`NonFiniteInput`: looked for only when the
 * text has a `null`).
 */
export function rawInputText(input: unknown): string | undefined | NonFiniteInput {
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
  const measured = text !== undefined && text.length > SHORT_INPUT_TEXT ? text : undefined;
  const at = text?.includes("null") === true ? firstNonFinite(input) : undefined;
  return at === undefined ? measured : new NonFiniteInput(at, measured);
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
export function bareActorId(actor: Frame["actor"] | null): string | null | undefined {
  if (actor === undefined || actor === null) return null; // null: no actor, as in the core
  // An id with a lone surrogate crosses as JSON, whose writer refuses it
  // (`frameText`): as a bare string it would reach the core rewritten
  // (U+FFFD), and two callers' ids could become one.
  if (typeof actor.id !== "string" || LONE_SURROGATE.test(actor.id)) return undefined;
  for (const key in actor) {
    if (key === "id") continue;
    const v = (actor as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (key === "roles" && Array.isArray(v) && v.length === 0) continue;
    return undefined;
  }
  return actor.id;
}

/** A call the core never started: its span (if any) ends with the error. */
export function notStarted(error: unknown, span: CallSpan | undefined): unknown {
  span?.endWithError(error instanceof CapabilityError ? error.code : "INTERNAL");
  return error;
}
