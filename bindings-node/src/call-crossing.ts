/**
 * How a governed call crosses into the core, for `registry.invoke` and
 * `registry.resume`: its frame as the surface alone, an actor id or JSON
 * text, and its raw input as the JSON text the core measures against the
 * input limits; and the span of a call that never crossed. Conversions
 * only, apart from the registry class, whose `invoke` and `resume` call
 * them.
 */
import { unknownFieldError } from "./arguments.js";
import { CapabilityError } from "./errors.js";
import { fail, LONE_SURROGATE, toJsonText } from "./json.js";
import { INTERNAL_MESSAGE, MAX_HASH_DEPTH } from "./generated/protocol.js";
import { SHORT_INPUT_TEXT } from "./native.js";
import type { CallSpan } from "./telemetry.js";
import type { Frame, TraceContext } from "./types.js";

/** The fields a frame may have (Python's `Frame` has the same, in its own spelling). */
export const FRAME_KEYS: readonly string[] = [
  "surface",
  "actor",
  "context",
  "trace",
  "requestId",
  "agentId",
  "sessionId",
  "signal",
  "onProgress",
];

/**
 * Refuses a frame key that is not one of `FRAME_KEYS` (listed again in the
 * switch, which V8 compares by pointer: twice as fast as a `Set` on every
 * invoke; `api-arguments.test.js` passes every one of them): a misspelt
 * field (`actorId`) is a TypeError naming it instead of being ignored,
 * which could make a call anonymous. `for…in`: allocates nothing.
 */
export function frameFields(fn: string, what: string, frame: object): void {
  for (const key in frame) {
    switch (key) {
      case "surface":
      case "actor":
      case "context":
      case "trace":
      case "requestId":
      case "agentId":
      case "sessionId":
      case "signal":
      case "onProgress":
        continue;
      default:
        throw unknownFieldError(fn, what, key, FRAME_KEYS);
    }
  }
}

export function frameJson(frame: Frame, trace: TraceContext | undefined = frame.trace): string {
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
export function frameText(value: Record<string, unknown>): string {
  let text: string | undefined;
  let error: unknown;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    error = e;
  }
  // JSON.stringify writes NaN and ±Infinity as null: an actor's attribute
  // would reach the core, Cedar and the audit record changed. Refused
  // instead (INVALID_INPUT NON_FINITE_NUMBER, as in Python and Swift).
  // (Also when it threw, on a BigInt say: the NaN is the caller's error to name.)
  if (text === undefined || text.includes("null")) {
    refuseNonFinite((value.actor as { attributes?: unknown } | undefined)?.attributes);
  }
  // `\ud…` escapes: a lone surrogate (JSON.stringify writes a pair as it
  // is), which the façade's writer refuses as no JSON value, in Python's
  // words, rather than let the core read another text.
  if (text !== undefined && !/\d{16}/.test(text) && !text.includes("\\ud")) return text;
  try {
    return toJsonText(value);
  } catch (e) {
    // Written by JSON.stringify, refused by the façade's writer: a lone
    // surrogate (INVALID_INPUT NOT_JSON_VALUE, naming where).
    if (error === undefined && e instanceof CapabilityError) throw e;
    throw error ?? new CapabilityError("INTERNAL", INTERNAL_MESSAGE);
  }
}

/** Refuses the first NaN or infinity in an actor's `attributes`, by its pointer in the actor. */
function refuseNonFinite(v: unknown): void {
  const at = firstNonFinite(v, "/attributes");
  if (at !== undefined) fail("NON_FINITE_NUMBER", at);
}

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

/** Whether the frame carries more than a known surface and an actor. */
export function needsJson(frame: Frame, surface: number | undefined): boolean {
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
