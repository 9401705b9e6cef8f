/**
 * How a governed call's frame crosses into the core: the fields a frame
 * may have, and its JSON text (refusing what `JSON.stringify` would write
 * as another value). Conversions only; `call-crossing.ts` has the input's.
 */
import { unknownFieldError } from "./arguments.js";
import { CapabilityError } from "./errors.js";
import { fail, toJsonText } from "./json.js";
import { INTERNAL_MESSAGE, MAX_HASH_DEPTH } from "./generated/protocol.js";
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
  // What JSON.stringify would write as another value — NaN or ±Infinity as
  // null, a Map or Set as `{}`, a Date as its text, a function left out —
  // would reach the core, Cedar and the audit record changed (a Map of
  // attributes read as `{}` lets a `forbid … when {… has org …}` through).
  // Refused instead, in Python's words (INVALID_INPUT NON_FINITE_NUMBER or
  // NOT_JSON_VALUE, naming where), as Python and Swift refuse such a frame.
  // The fields the core reads of the actor (which may itself be any object
  // JSON reads), named from the actor as Python names them: `/attributes/org`.
  const actor = value.actor as { roles?: unknown; attributes?: unknown; toJSON?: unknown } | null | undefined;
  if (typeof actor === "object" && actor !== null) {
    // JSON would write what its `toJSON` returns, not the fields checked here.
    if (typeof actor.toJSON === "function") fail("NOT_JSON_VALUE", "", "an actor with its own toJSON");
    const seen = new Map<object, number>();
    if (actor.roles !== undefined) refuseNotJson(actor.roles, "/roles", [], [], seen);
    if (actor.attributes !== undefined) refuseNotJson(actor.attributes, "/attributes", [], [], seen);
  }
  let text: string | undefined;
  let error: unknown;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    error = e;
  }
  // `\ud…` escapes: a lone surrogate (JSON.stringify writes a pair as it
  // is), which the façade's writer refuses as no JSON value, in Python's
  // words, rather than let the core read another text.
  if (text !== undefined && !/\d{16}/.test(text) && !text.includes("\\ud")) return text;
  // Too large for a string (or too deep): no writer does better, and the
  // façade's would build it piece by piece first. The app's frame: INTERNAL.
  if (error instanceof RangeError) throw new CapabilityError("INTERNAL", INTERNAL_MESSAGE);
  try {
    return toJsonText(value);
  } catch (e) {
    // Written by JSON.stringify, refused by the façade's writer: a lone
    // surrogate (INVALID_INPUT NOT_JSON_VALUE, naming where).
    if (error === undefined && e instanceof CapabilityError) throw e;
    throw error ?? new CapabilityError("INTERNAL", INTERNAL_MESSAGE);
  }
}

/**
 * Refuses the first value under `root` that `JSON.stringify` would write as
 * another value or leave out: a NaN or infinite number, an object other
 * than an array or a plain object (a Map, Set, Date, Number or class
 * instance; a plain object of another realm is plain), a function or
 * symbol, an array item `undefined`. (An object property `undefined` is
 * absent, as in every binding.) Own enumerable keys only, as JSON reads
 * them. A walk of at most the core's depth that never enters an object on
 * its own path: a cycle, or deeper nesting, is left to the JSON writer's
 * own refusal. A BigInt is written exactly by the façade's writer. The
 * pointer is built only for a refusal (`keys`: the path's keys so far).
 */
function refuseNotJson(v: unknown, root: string, keys: string[], path: object[], seen: Map<object, number>): void {
  const at = () => root + keys.map((k) => `/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
  switch (typeof v) {
    case "string":
    case "boolean":
    case "bigint":
      return;
    case "number":
      if (!Number.isFinite(v)) fail("NON_FINITE_NUMBER", at());
      return;
    case "object":
      break;
    default:
      fail("NOT_JSON_VALUE", at(), `a ${typeof v}`);
  }
  if (v === null || path.length >= MAX_HASH_DEPTH || path.includes(v)) return;
  // An object already checked from as shallow a depth is not walked again:
  // shared references would make the walk exponential.
  const before = seen.get(v);
  if (before !== undefined && before <= path.length) return;
  seen.set(v, path.length);
  if (v instanceof Number && !Number.isFinite(Number(v))) fail("NON_FINITE_NUMBER", at());
  const proto = Object.getPrototypeOf(v);
  if (!Array.isArray(v) && proto !== null && Object.getPrototypeOf(proto) !== null) {
    fail("NOT_JSON_VALUE", at(), `a ${(v as object).constructor?.name ?? "non-plain object"}`);
  }
  // JSON writes what `toJSON` returns (an array's too).
  if (typeof (v as { toJSON?: unknown }).toJSON === "function") {
    fail("NOT_JSON_VALUE", at(), Array.isArray(v) ? "an array with toJSON" : "an object with toJSON");
  }
  path.push(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      keys.push(String(i));
      if (v[i] === undefined) fail("NOT_JSON_VALUE", at(), "an undefined");
      refuseNotJson(v[i], root, keys, path, seen);
      keys.pop();
    }
  } else {
    for (const key of Object.keys(v)) {
      const item = (v as Record<string, unknown>)[key];
      if (item === undefined) continue;
      keys.push(key);
      refuseNotJson(item, root, keys, path, seen);
      keys.pop();
    }
  }
  path.pop();
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
