// Capabilities that handle a secret (issue 10, item 2): every path a secret
// could leak by — an output a redactor removes, inputs of calls that are
// rejected (invalid input, policy denied, not found), an approval input the
// approval redactor removes, a handler error that mentions it. Imported by
// the leak-scan tests; not a test file itself.

import { os } from "@orpc/server";
import * as z from "zod";

import { agentProcedure, createCapabilityRegistry, deny } from "@orpc-agent/core";

/** The sentinel: a string that must never come out of the library. */
export const SECRET = "SENTINEL-7f3a9c-do-not-leak";

const strip = ({ secret, ...rest }) => rest;

/** A fresh registry (+ the audit records it delivered) handling SECRET. */
export async function secretsRegistry(options = {}) {
  const audit = [];
  const base = agentProcedure(os.$context());
  const router = {
    acct: {
      // Output carries the secret; the output redactor removes it.
      get: base
        .meta({
          agent: {
            description: "Get an account.",
            expose: { mcp: true, aiSdk: true, direct: true },
            sideEffect: "read",
            risk: "low",
            redact: { output: (out) => strip(out) },
          },
        })
        .input(z.object({ id: z.string() }))
        .handler(async ({ input }) => ({ id: input.id, secret: SECRET })),
      // Typed input: a secret where a number belongs is INVALID_INPUT.
      create: base
        .meta({
          agent: {
            description: "Create an account.",
            expose: { mcp: true, aiSdk: true, direct: true },
            sideEffect: "write",
            risk: "low",
          },
        })
        .input(z.object({ name: z.string().max(8), pin: z.number() }))
        .handler(async () => ({ created: true })),
      // A host policy denies whenever the input holds a secret.
      purge: base
        .meta({
          agent: {
            description: "Purge an account.",
            expose: { mcp: true, aiSdk: true, direct: true },
            sideEffect: "destructive",
            risk: "high",
            policies: [{ name: "no-secrets", evaluate: () => deny("inputs with credentials are refused") }],
          },
        })
        .input(z.object({ id: z.string(), token: z.string() }))
        .handler(async () => ({ purged: true })),
      // Approval required; the approval-input redactor hides the secret.
      transfer: base
        .meta({
          agent: {
            description: "Transfer funds.",
            expose: { mcp: true, aiSdk: true, direct: true },
            sideEffect: "write",
            risk: "high",
            approval: { required: true, type: "human-confirmation" },
            redact: { approvalInput: (input) => strip(input), output: (out) => strip(out) },
          },
        })
        .input(z.object({ to: z.string(), amount: z.number(), secret: z.string() }))
        .handler(async ({ input }) => ({ to: input.to, amount: input.amount, secret: input.secret })),
      // The handler fails with a message naming the secret.
      fail: base
        .meta({
          agent: {
            description: "Always fails.",
            expose: { mcp: true, aiSdk: true, direct: true },
            sideEffect: "read",
            risk: "low",
          },
        })
        .input(z.object({ id: z.string() }))
        .handler(async () => {
          throw new Error(`connect failed: password ${SECRET} rejected`);
        }),
      // Not on mcp/aiSdk: NOT_FOUND there, exactly like a missing tool.
      hidden: base
        .meta({ agent: { description: "Direct only.", expose: { direct: true }, sideEffect: "read", risk: "low" } })
        .input(z.object({ id: z.string() }))
        .handler(async () => ({ secret: SECRET })),
    },
  };
  // The operator's channel (issue 15): the real errors of application code
  // go here, with their text; the console, the caller and the model never
  // get them.
  const operatorLog = [];
  const registry = await createCapabilityRegistry(router, {
    audit: { subscriber: (r) => audit.push(r), payloads: true },
    logger: { warn: (message, error) => operatorLog.push({ message, error }) },
    ...options,
  });
  return { registry, audit, operatorLog };
}

/**
 * Captures everything written to the console, stdout, stderr and process
 * warnings while `fn` runs (and still forwards it), returning the text.
 */
export async function capturingOutput(fn) {
  const seen = [];
  const saved = {};
  for (const m of ["log", "error", "warn", "info", "debug", "trace"]) {
    saved[m] = console[m];
    console[m] = (...args) => {
      seen.push(args.map((a) => (typeof a === "string" ? a : safeText(a))).join(" "));
      saved[m].apply(console, args);
    };
  }
  const writes = [process.stdout, process.stderr].map((stream) => {
    const write = stream.write;
    stream.write = function (chunk, ...rest) {
      seen.push(String(chunk));
      return write.call(this, chunk, ...rest);
    };
    return [stream, write];
  });
  const onWarning = (w) => seen.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  try {
    await fn();
  } finally {
    for (const [m, f] of Object.entries(saved)) console[m] = f;
    for (const [stream, write] of writes) stream.write = write;
    process.off("warning", onWarning);
  }
  return seen.join("\n");
}

/** Text of any value for scanning, including an Error's message, stack and cause. */
export function safeText(value) {
  const seen = new WeakSet();
  return JSON.stringify(value, (_k, v) => {
    if (v instanceof Error) {
      return { name: v.name, message: v.message, stack: v.stack, cause: v.cause, ...v };
    }
    if (typeof v === "bigint") return String(v);
    if (v !== null && typeof v === "object") {
      if (seen.has(v)) return "[cycle]";
      seen.add(v);
    }
    return v;
  });
}
