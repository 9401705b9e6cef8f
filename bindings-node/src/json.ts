/**
 * JavaScript values → JSON text for the core (the approval hash, input
 * predicates, audit payloads). Stricter than `JSON.stringify`, which would
 * silently turn `NaN` into `null` or a `Map` into `{}` and so bind an
 * approval to a different value than the one the handler gets. Integers
 * beyond ±2^53 are written as BigInt digits so the core reads them exactly.
 * A value outside the JSON data model throws INVALID_INPUT; `details.reason`
 * names why (the core's hash sub-codes, docs/decisions.md).
 */
import { CapabilityError } from "./errors.js";
import { MAX_EXACT_INTEGER, MAX_HASH_DEPTH as MAX_DEPTH, MIN_EXACT_INTEGER } from "./generated/protocol.js";
import { N } from "./native.js";

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A UTF-16 surrogate not in a pair (in `u` mode a pair is one code point, never matched). */
/** A lone surrogate: a string with one has no UTF-8 form. */
export const LONE_SURROGATE = /\p{Cs}/u;

/** Refuses a string with a lone surrogate (the core would read another text), naming where, in Python's words. */
export function requireWellFormed(v: string, path: string): void {
  if (LONE_SURROGATE.test(v)) fail("NOT_JSON_VALUE", path, "a string that is not valid UTF-8");
}

/** Refuses the value at `path` (a JSON pointer) for `reason`, in the core's words (`kind`: what JSON cannot hold). */
export function fail(reason: string, path: string, kind = ""): never {
  throw new CapabilityError("INVALID_INPUT", N.hostValueErrorMessage(reason, path, kind), { details: { reason } });
}

/**
 * Set while writing when the text would not give the value back as a
 * resumed handler reads it (`parseCoreJson`): a `toJSON` result (a Date
 * comes back a string), a `Map` (a plain object), a BigInt within ±(2^53 − 1)
 * (a number), an `undefined` array item (null), a function or symbol property
 * (dropped). See `exportInputText`.
 */
let lossy = false;

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function write(v: unknown, path: string, depth: number, out: string[]): void {
  switch (typeof v) {
    case "string":
      // A lone surrogate has no UTF-8 form: the core would read another text (Python's words).
      requireWellFormed(v, path);
      out.push(JSON.stringify(v));
      return;
    case "boolean":
      out.push(v ? "true" : "false");
      return;
    case "number":
      if (!Number.isFinite(v)) fail("NON_FINITE_NUMBER", path);
      // A JavaScript number is a double: beyond ±2^53 an integral one must
      // reach the core as a float, not as the integer its digits spell.
      if (Math.abs(v) > Number.MAX_SAFE_INTEGER && Number.isInteger(v)) {
        const t = JSON.stringify(v);
        out.push(t.includes("e") ? t : `${t}.0`);
      } else {
        out.push(JSON.stringify(v));
      }
      return;
    case "bigint":
      if (v < MIN_EXACT_INTEGER || v > MAX_EXACT_INTEGER) fail("UNREPRESENTABLE_NUMBER", path);
      if (v >= -MAX_SAFE && v <= MAX_SAFE) lossy = true;
      out.push(v.toString());
      return;
    case "object":
      break;
    default:
      fail("NOT_JSON_VALUE", path, `a ${typeof v}`);
  }
  if (v === null) {
    out.push("null");
    return;
  }
  if (depth >= MAX_DEPTH) fail("TOO_DEEP", path);
  if (Array.isArray(v)) {
    out.push("[");
    // Indexed, not forEach: a hole is written (as null, as JSON.stringify
    // does) rather than skipped, which would bind another array.
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out.push(",");
      const item: unknown = v[i];
      if (item === undefined) lossy = true;
      write(item === undefined ? null : item, `${path}/${i}`, depth + 1, out);
    }
    out.push("]");
    return;
  }
  if (v instanceof Map) {
    lossy = true;
    const entries: [string, unknown][] = [];
    for (const [k, val] of v) {
      if (typeof k !== "string") fail("NON_TEXT_KEY", path);
      entries.push([k, val]);
    }
    writeObject(entries, path, depth, out);
    return;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === "function") {
    lossy = true;
    write((v as { toJSON(): unknown }).toJSON(), path, depth, out);
    return;
  }
  if (!isPlainObject(v)) fail("NOT_JSON_VALUE", path, `a ${v.constructor?.name ?? "non-plain object"}`);
  writeObject(Object.entries(v), path, depth, out);
}

function writeObject(entries: [string, unknown][], path: string, depth: number, out: string[]): void {
  out.push("{");
  let first = true;
  for (const [k, val] of entries) {
    if (val === undefined) continue; // as JSON.stringify (a resumed handler reads it as absent: the same)
    if (typeof val === "function" || typeof val === "symbol") {
      lossy = true; // dropped, as JSON.stringify does
      continue;
    }
    if (!first) out.push(",");
    first = false;
    requireWellFormed(k, path);
    out.push(JSON.stringify(k), ":");
    write(val, `${path}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`, depth + 1, out);
  }
  out.push("}");
}

/** The JSON text of `value`, or INVALID_INPUT when it has none. */
export function toJsonText(value: unknown): string {
  const out: string[] = [];
  write(value === undefined ? null : value, "", 0, out);
  return out.join("");
}

/**
 * The JSON text of a value the core may show or record but can do without
 * (an error's `details`, an oRPC error's `data`, the audited output):
 * `undefined` when there is none or it has no JSON form — left out, never
 * an error of its own.
 */
export function optionalJsonText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  try {
    return toJsonText(value);
  } catch {
    return undefined;
  }
}

/**
 * The JSON text an adapter sends a model of an output: `JSON.stringify`'s,
 * except that a NaN or infinite number, which it writes as `null`, throws
 * (a RangeError): the model is not sent a value other than the one the
 * handler returned, and Python's adapters refuse such an output too. When
 * the first text holds a `null`, a second pass checks every number and its
 * text is the one returned (what is sent is what was checked; a getter or
 * `toJSON` is then asked twice). `undefined` when the value has none.
 */
export function modelJsonText(value: unknown): string | undefined {
  const text = JSON.stringify(value);
  if (!text?.includes("null")) return text;
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "number" && !Number.isFinite(v)) throw new RangeError("a NaN or infinite number has no JSON form");
    return v;
  });
}

/**
 * The validated input's JSON text for the core (`ExportInput`), and whether
 * it gives the value back: a resumed handler gets `parseCoreJson` of what the
 * core stored, so a form that reads back as something else (a Date as its
 * ISO text, a Map as an object, a small BigInt as a number) is not a form of
 * this value. The core refuses such an input (`Answer::input_not_rebuilt`,
 * as Python's rebuild check answers) rather than bind a value the handler
 * would not get. INVALID_INPUT when the value has no JSON form at all.
 */
export function exportInputText(value: unknown): { text: string; rebuilds: boolean } {
  const outer = lossy;
  lossy = false;
  try {
    const text = toJsonText(value);
    return { text, rebuilds: !lossy };
  } finally {
    lossy = outer;
  }
}

/**
 * JSON text from the core → a JavaScript value, every integer exact. The
 * core marks a text that holds an integer beyond ±(2^53 − 1) (native
 * js_json.rs): such integers arrive as BigInt, so the handler, the
 * approver's view and the app get the value the approval hash binds, not
 * a rounded double (issue 14). Any other text is `JSON.parse`d as is.
 */
export function parseCoreJson(text: string): any {
  if (text.charCodeAt(0) !== 1) return JSON.parse(text);
  return JSON.parse(text.slice(1), (_key, v: unknown) => {
    if (typeof v !== "string" || v.charCodeAt(0) !== 0) return v;
    return v.charCodeAt(1) === 110 /* n */ ? BigInt(v.slice(2)) : v.slice(2);
  });
}
