/**
 * `std:` metadata maps (spec/004): decode CBOR to a JSON view, encode the
 * view to deterministic CBOR, and check a map against a metadata position —
 * the core's functions (`orpc_agent_core::ffi::act`), the same in every
 * binding and in `orpc-agent meta`. Conversion only.
 *
 * The JSON view: plain values map one to one (integers beyond 2^53 as
 * BigInt); what JSON cannot say gets a one-key wrapper — `{$bytes: hex}`,
 * `{$tag: n, value}`, `{$float: "NaN"}`, `{$int: "<decimal>"}`, `{$map:
 * [[k, v], …]}` — so a decoded map encodes back to the same bytes.
 *
 * Bad input is a `CapabilityError` `INVALID_INPUT` whose `details.reason`
 * is the decoder's code (`NOT_A_MAP`, `TRUNCATED`, `DUPLICATE_KEY`, …;
 * `UNKNOWN_POSITION` for a position the core does not know).
 */
import { call } from "./errors.js";
import { parseCoreJson, toJsonText } from "./json.js";
import { N } from "./native.js";

/** A metadata map in the JSON view. */
export type StdMeta = Record<string, unknown>;

/** One problem `checkStdMeta` found. */
export interface StdMetaProblem {
  /** The key it is about (`""` for the map as a whole). */
  key: string;
  /** A stable code, e.g. `WRONG_TYPE`, `UNKNOWN_STD_KEY`. */
  code: string;
  severity: "error" | "warning";
  message: string;
}

/** Where a metadata map appears (spec/004), as `checkStdMeta` takes it. */
export type StdMetaPosition = string;

/** The JSON view of a CBOR metadata map. */
export function decodeStdMeta(bytes: Uint8Array): StdMeta {
  return parseCoreJson(call(() => N.stdMetaDecode(toBuffer(bytes))));
}

/** The deterministic CBOR of a metadata map in the JSON view. */
export function encodeStdMeta(meta: StdMeta): Uint8Array {
  const text = toJsonText(meta);
  return new Uint8Array(call(() => N.stdMetaEncode(text)));
}

/**
 * The problems of a metadata map at `position` (`tool-definition`,
 * `tool-call`, …); none means valid there. `strict`: unknown `std:` keys
 * are errors.
 */
export function checkStdMeta(
  bytes: Uint8Array,
  position: StdMetaPosition,
  options: { strict?: boolean } = {},
): StdMetaProblem[] {
  const strict = options.strict === true;
  return JSON.parse(call(() => N.stdMetaCheck(toBuffer(bytes), String(position), strict)));
}

function toBuffer(bytes: Uint8Array): Buffer {
  if (!(bytes instanceof Uint8Array)) throw new TypeError("Expected the CBOR bytes as a Uint8Array or Buffer.");
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The `act:component` metadata of a WebAssembly component, readable:
 * `{name, version, description, defaultLanguage, capabilities: [{id,
 * description, allow, mountRoot, mounts}], metadata}`. A component without
 * the section is INVALID_INPUT with `details.reason` `NO_SECTION`.
 */
export function inspectComponent(wasm: Uint8Array): Record<string, unknown> {
  return parseCoreJson(call(() => N.actComponentInspect(toBuffer(wasm))));
}

/**
 * `wasm` with the `act:component` section the `act.toml` manifest text
 * describes (replacing any section it had). An invalid manifest is
 * INVALID_INPUT (`details.reason`, and `details.problems` for invalid
 * metadata); `manifestName` names it in messages.
 */
export function embedComponent(manifest: string, wasm: Uint8Array, manifestName = "act.toml"): Uint8Array {
  return new Uint8Array(call(() => N.actComponentEmbed(String(manifest), String(manifestName), toBuffer(wasm))));
}

/** An `act.toml` manifest checked: the metadata it describes (`inspectComponent`'s form), or INVALID_INPUT. */
export function checkManifest(manifest: string, manifestName = "act.toml"): Record<string, unknown> {
  return parseCoreJson(call(() => N.actManifestCheck(String(manifest), String(manifestName))));
}

/**
 * `std:forward` for a chain of hops: `hops[0]` as the first component sees
 * it, `hops[1]` under its `std:forward`, and so on (each in the JSON view).
 */
export function wrapStdForward(hops: readonly StdMeta[]): StdMeta {
  const text = toJsonText(hops); // the core refuses anything but a list (NOT_A_LIST)
  return parseCoreJson(call(() => N.stdForwardWrap(text)));
}

/** One `std:forward` layer unwrapped: this hop's metadata, and the next hop's (`null` when none). */
export function unwrapStdForward(meta: StdMeta): { here: StdMeta; next: StdMeta | null } {
  const text = toJsonText(meta);
  return parseCoreJson(call(() => N.stdForwardUnwrap(text)));
}

/** Why `decideCapabilityGrant` denied a use. */
export type CapabilityDenial = "UNDECLARED" | "NOT_GRANTED" | "OUTSIDE_DECLARATION" | "OUTSIDE_GRANT";

/** What `decideCapabilityGrant` answers. */
export type CapabilityGrantDecision = { allowed: true } | { allowed: false; reason: CapabilityDenial; message: string };

/**
 * One use of a capability class (spec/004 `std.capabilities`) decided by
 * the core against what a component declares (`declared`: the
 * `std.capabilities` map, `{"wasi:http": {allow: [{host: "*.example.com"}]}}`)
 * and what the host granted (`grants`: `{"wasi:http": {}}` as declared, or
 * `{allow: [...]}` narrower; no grant widens a declaration). `request`:
 * `{id, params}`. A malformed declaration, grant or request is
 * INVALID_INPUT (`details.reason`: `WILDCARD_CLASS`, `BAD_CAPABILITY_ID`,
 * `BAD_PARAMETER`, `BAD_REQUEST`, …), never an allow.
 */
export function decideCapabilityGrant(
  declared: StdMeta,
  grants: StdMeta,
  request: { id: string; params?: StdMeta },
): CapabilityGrantDecision {
  const [d, g, r] = [toJsonText(declared), toJsonText(grants), toJsonText(request)];
  return JSON.parse(call(() => N.capabilityGrantDecide(d, g, r)));
}

/**
 * The tool-definition metadata map (spec/004) a capability's agent
 * metadata states, in the JSON view: `std:read-only` and `std:destructive`
 * from `sideEffect`, `std:idempotent`, `std:timeout-ms`, `std:tags`, the
 * description as `std:usage-hints`. `meta` is the data of `.meta({agent})`
 * (or a declaration file's entry); metadata the registry would refuse is
 * INVALID_INPUT with `details.reason` `INVALID_AGENT_META` and
 * `details.problems`.
 */
export function toolDefinitionMeta(capabilityId: string, meta: Record<string, unknown>): StdMeta {
  const text = toJsonText(meta);
  return parseCoreJson(call(() => N.stdToolDefinitionMeta(String(capabilityId), text)));
}
