// Shared by the suites: vector files, the fixed host vocabulary of
// tests/vectors/README.md as real oRPC procedures and hooks, subset matching.
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { os } from "@orpc/server";

import { CapabilityError } from "@orpc-agent/core";

export const VECTORS = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tests", "vectors");

/** Every case of every file in a vector directory (fails on an empty set). */
export function loadVectors(dir) {
  const cases = [];
  for (const f of readdirSync(join(VECTORS, dir))
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const d = JSON.parse(readFileSync(join(VECTORS, dir, f), "utf8"));
    for (const c of d.cases) cases.push({ file: f, ...c });
  }
  if (cases.length === 0) throw new Error(`no vectors in ${dir}`);
  return cases;
}

/** Subset match of README: objects by key, arrays element-wise with equal length, null matches absent. */
export function subsetProblems(expected, actual, path = "") {
  if (expected === null)
    return actual === null || actual === undefined ? [] : [`${path}: expected null, got ${JSON.stringify(actual)}`];
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      return [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
    return expected.flatMap((e, i) => subsetProblems(e, actual[i], `${path}[${i}]`));
  }
  if (typeof expected === "object") {
    if (actual === null || typeof actual !== "object")
      return [`${path}: expected object, got ${JSON.stringify(actual)}`];
    return Object.entries(expected).flatMap(([k, v]) => subsetProblems(v, actual[k], `${path}.${k}`));
  }
  return expected === actual ? [] : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}

/** The schema subset validator of the README, as a Standard Schema. */
export function subsetSchema(spec) {
  const typeOk = (t, v) =>
    t === "string"
      ? typeof v === "string"
      : t === "number"
        ? typeof v === "number"
        : t === "integer"
          ? Number.isInteger(v)
          : t === "boolean"
            ? typeof v === "boolean"
            : t === "object"
              ? v !== null && typeof v === "object" && !Array.isArray(v)
              : t === "array"
                ? Array.isArray(v)
                : t === "null"
                  ? v === null
                  : false;
  return {
    "~standard": {
      version: 1,
      vendor: "vectors",
      validate(value) {
        // `{throw}`: a validator that throws a plain error (never shown).
        if (spec.throw !== undefined) throw new Error(spec.throw);
        // `{refuse}`: the app's own CapabilityError (its message is shown).
        if (spec.refuse !== undefined) throw new CapabilityError("INVALID_INPUT", spec.refuse);
        if (value === null || typeof value !== "object" || Array.isArray(value))
          return { issues: [{ message: "must be an object" }] };
        const v = { ...(spec.defaults ?? {}), ...value };
        for (const k of spec.required ?? []) if (!(k in v)) return { issues: [{ message: `missing ${k}`, path: [k] }] };
        for (const [k, t] of Object.entries(spec.properties ?? {})) {
          if (k in v && !typeOk(t, v[k])) return { issues: [{ message: `must be ${t}`, path: [k] }] };
        }
        return { value: v };
      },
    },
  };
}

/** Host policy behaviours of the README, as `{name, mode, evaluate}`. */
export function hostPolicy(marker, behaviours) {
  const b = behaviours?.[marker.name];
  const evaluate = async ({ frame }) => {
    if (!b) throw new Error(`no behaviour for ${marker.name}`);
    switch (b.kind) {
      case "allow":
        return { decision: "allow" };
      case "deny-anonymous":
        return frame.actor?.id === undefined && frame.sessionId === undefined
          ? { decision: "deny", reason: b.reason }
          : { decision: "allow" };
      case "abstain":
        return { decision: "abstain" };
      case "deny":
        return { decision: "deny", reason: b.reason };
      case "throw":
        throw new Error("policy exploded with secret s3cr3t");
      case "require-approval":
        return {
          decision: "requireApproval",
          approvalType: b.approvalType,
          reason: b.reason,
          expiresInMs: b.expiresInMs,
        };
      case "delay":
        await new Promise((r) => setTimeout(r, b.ms));
        return { decision: "allow" };
      default:
        throw new Error(`unknown policy kind ${b.kind}`);
    }
  };
  return { ...marker, evaluate };
}

/** Replaces the markers of a vector's meta with functions. */
export function metaWithHooks(meta, entry, behaviours) {
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) return meta;
  const m = { ...meta };
  if (m.redact && typeof m.redact === "object") {
    m.redact = { ...m.redact };
    if (m.redact.output === true)
      m.redact.output = redactor(entry?.redactOutput ?? { kind: "mask-fields", fields: [] });
    if (m.redact.approvalInput === true)
      m.redact.approvalInput = redactor(entry?.redactApprovalInput ?? { kind: "mask-fields", fields: [] });
  }
  if (m.retry && typeof m.retry === "object" && m.retry.retryOn === true) {
    const codes = entry?.retryOn?.codes ?? [];
    m.retry = { ...m.retry, retryOn: (e) => codes.includes(e.code) };
  }
  if (Array.isArray(m.policies)) {
    m.policies = m.policies.map((p) =>
      p && typeof p === "object" && p.host === true ? hostPolicy(withoutHost(p), behaviours) : p,
    );
  }
  return m;
}

function withoutHost(p) {
  const { host, ...rest } = p;
  return rest;
}

export function redactor(spec) {
  return (value) => {
    if (spec.kind === "throw") throw new Error("redactor exploded");
    if (value === null || typeof value !== "object") return value;
    const out = { ...value };
    for (const f of spec.fields ?? []) if (f in out) out[f] = "***";
    return out;
  };
}

/** A handler of the README vocabulary; `calls` counts per capability. */
export function handlerFor(id, spec, calls) {
  return async ({ input }) => {
    calls[id] = (calls[id] ?? 0) + 1;
    switch (spec.kind) {
      case "echo":
        return input;
      case "fail-with-code":
        throw new CapabilityError(spec.code, "the handler's own error", {
          retryable: spec.retryable,
          details: spec.details,
        });
      case "fail-retryable-n-times":
        if (calls[id] <= spec.n) throw new CapabilityError("EXECUTION_FAILED", "transient", { retryable: true });
        return input;
      case "delay":
        await new Promise((r) => setTimeout(r, spec.ms)); // ignores its signal on purpose
        return input;
      case "throw":
        throw new Error(spec.message);
      case "return":
        return spec.value;
      case "return-nan":
        return { score: Number.NaN };
      case "cancel-itself":
        // The platform's own cancellation error, the caller's signal not aborted.
        throw new DOMException("This operation was aborted", "AbortError");
      default:
        throw new Error(`unknown handler kind ${spec.kind}`);
    }
  };
}

/** A flat router: one procedure per id (ids may contain dots or spaces). */
export function vectorRouter(capabilities, behaviours, calls) {
  const router = {};
  for (const [id, entry] of Object.entries(capabilities)) {
    let p = os.meta({ agent: metaWithHooks(entry.meta, entry, behaviours) });
    if (entry.inputSchema) p = p.input(subsetSchema(entry.inputSchema));
    if (entry.outputSchema) p = p.output(subsetSchema(entry.outputSchema));
    router[id] = p.handler(handlerFor(id, entry.handler ?? { kind: "echo" }, calls));
  }
  return router;
}

/** Runtime options of a vector with host policy markers made functions. */
export function vectorOptions(options, behaviours) {
  const o = { ...(options ?? {}) };
  if (Array.isArray(o.policies)) {
    o.policies = o.policies.map((p) =>
      p && typeof p === "object" && p.host === true ? hostPolicy(withoutHost(p), behaviours) : p,
    );
  }
  return o;
}
