/**
 * `createCapabilityRegistry(router, options)` and its options: the core's
 * registry built from the router's `agent` meta, the options checked and
 * split (the binding's own, the rest for the core), the approval store,
 * audit sink and telemetry opened; and `InspectReport`, the report of what
 * was built. Runs once per registry, so it lives apart from the class whose
 * methods every call runs (`registry.ts`).
 */
import { collectProcedures, declare, policiesToJson, type CapabilityHooks } from "./declare.js";
import { argumentError, optionsObject } from "./arguments.js";
import { call } from "./errors.js";
import { N } from "./native.js";
import { Telemetry, type TelemetryOptions } from "./telemetry.js";
import { buildOnPostgres, PostgresAuditSink, postgresOf, type PostgresConnection } from "./stores.js";
import { CapabilityRegistry } from "./registry.js";
import type { AgentPolicy, AuditRecord, ExposureSurface, PolicyFunction } from "./types.js";

/**
 * Where approval requests live: in this process, in a SQLite file shared by
 * the processes of one machine, or in PostgreSQL shared by every instance
 * (`{postgres: url}` or `{postgres: {url, maxConnections?, tls?, …}}`).
 */
export type ApprovalStoreOption = "memory" | { sqlite: string } | { postgres: PostgresConnection };

export interface RegistryOptions<TContext = any> {
  /** Runtime-level policies, evaluated before each capability's own (SI-6). */
  policies?: AgentPolicy<TContext>[];
  defaults?: { timeoutMs?: number; approvalExpiresInMs?: number };
  /** An approver may not approve their own request. */
  approverMustDiffer?: boolean;
  approvalStore?: ApprovalStoreOption;
  /**
   * Audit subscriber, or `{subscriber, payloads}` to include redacted
   * outputs, or `{postgres: url, subscriber?, payloads?}` to write every
   * record to PostgreSQL (`registry.auditSink`).
   */
  audit?:
    | ((record: AuditRecord) => void)
    | { subscriber: (record: AuditRecord) => void; payloads?: boolean }
    | { postgres: PostgresConnection; subscriber?: (record: AuditRecord) => void; payloads?: boolean };
  /**
   * Where operators see what application code threw — a handler, policy,
   * validator or redactor — with the real error (its class, message and
   * stack). The model and the caller never see it: they get the core's
   * generic error. Default `console`; `false` logs nothing.
   */
  logger?: Logger | false;
  /**
   * OpenTelemetry: one span per governed call (`execute_tool <name>`, the
   * GenAI conventions for tool execution plus the governance outcome as
   * `orpc_agent.*` attributes, never a payload), a call counter and a
   * duration histogram. `true` uses the globally registered providers.
   * Needs `@opentelemetry/api`. The audit record's `traceparent` names the
   * call's span.
   */
  telemetry?: true | TelemetryOptions;
}

/** The part of `console` the registry logs failures to. */
export interface Logger {
  warn(message: string, error: unknown): void;
}

export interface InspectReport {
  valid: boolean;
  capabilities: Array<{
    id: string;
    surfaces: ExposureSurface[];
    toolNames: { aiSdk: string; mcp: string };
    resolved: Record<string, unknown>;
    warnings: Array<{ capability: string | null; path: string; code: string; message: string }>;
  }>;
  problems: unknown[];
}

/**
 * Builds a registry from an oRPC router: every procedure with `agent` meta
 * (nested and lazy routers included; lazy ones are loaded here) becomes a
 * capability whose id is its router path joined with `.`. Rejects with
 * `RegistryValidationError` listing every problem at once (SI-4).
 */
export async function createCapabilityRegistry<TContext = any>(
  router: unknown,
  options: RegistryOptions<TContext> = {},
): Promise<CapabilityRegistry<TContext>> {
  if (router === null || (typeof router !== "object" && typeof router !== "function")) {
    throw argumentError(
      "createCapabilityRegistry",
      "the router",
      "an oRPC router (an object of procedures) or a procedure",
      router,
    );
  }
  if (options !== undefined && (options === null || typeof options !== "object" || Array.isArray(options))) {
    throw argumentError(
      "createCapabilityRegistry",
      "the options",
      "an object ({ policies?, defaults?, approvalStore?, audit?, … })",
      options,
    );
  }
  const found = await collectProcedures(router);
  const decls: unknown[] = [];
  const caps: CapabilityHooks[] = [];
  for (const f of found) {
    const { decl, hooks } = declare(f);
    decls.push(decl);
    caps.push(hooks);
  }
  const runtimePolicies = new Map<number, PolicyFunction>();
  // Everything but the binding's own options goes to the core, which
  // reports unknown keys (UNKNOWN_FIELD) instead of ignoring a typo.
  const { approvalStore, audit, logger, telemetry, ...core } = options as RegistryOptions<TContext> &
    Record<string, unknown>;
  if (logger !== undefined && logger !== false && (logger === null || typeof (logger as Logger).warn !== "function")) {
    throw argumentError(
      "createCapabilityRegistry",
      "options.logger",
      "an object with a warn(message, error) method, or false",
      logger,
    );
  }
  const opts: Record<string, unknown> = { ...core };
  if (options.policies !== undefined) opts.policies = policiesToJson(options.policies, runtimePolicies);
  // The runtime policy functions held here: a `{ host: true }` marker
  // without one is the core's MISSING_HOOK problem.
  opts.hostPolicies = [...runtimePolicies.keys()];
  const tel = await openTelemetry(telemetry);
  const auditPg = postgresOf(audit, ["subscriber", "payloads"]);
  const sink = auditPg === undefined ? undefined : await PostgresAuditSink.open(auditPg);
  const subscriber =
    typeof audit === "function" ? audit : typeof audit === "object" && audit !== null ? audit.subscriber : undefined;
  // Not a subscriber: the core names the problem (UNKNOWN_FIELD, as the registry vectors expect).
  if (audit !== undefined && typeof subscriber !== "function" && sink === undefined) opts.audit = audit;
  const payloads = typeof audit === "object" && audit !== null && audit.payloads === true;
  // The core audits when a subscriber, telemetry or the sink reads its
  // records; the façade sees them only for the first two (the sink is fed
  // from Rust).
  const toHost = typeof subscriber === "function" || tel !== undefined;
  const audits = toHost || sink !== undefined;
  const storePg = postgresOf(approvalStore);
  const build = [JSON.stringify(decls), JSON.stringify(opts)] as const;
  let handle: number;
  try {
    handle =
      storePg === undefined
        ? call(() => N.registryBuild(...build, JSON.stringify(approvalStore ?? "memory"), audits, payloads))
        : await buildOnPostgres(storePg, ...build, audits, payloads);
    if (sink !== undefined) call(() => N.registryAttachAuditSink(handle, sink.handle, toHost));
    if (tel?.payloads === true) call(() => N.registrySpanPayloads(handle, true));
  } catch (e) {
    sink?.close(); // no registry holds it: its pool goes too
    throw e;
  }
  const registry = new CapabilityRegistry<TContext>(
    handle,
    caps,
    runtimePolicies,
    typeof subscriber === "function" ? subscriber : undefined,
    storePg !== undefined,
    sink,
    tel,
  );
  registry.logger = logger === false ? undefined : ((logger as Logger | undefined) ?? console);
  return registry;
}

/** `options.telemetry` read: off, the global providers (`true`), or the given ones. */
async function openTelemetry(option: unknown): Promise<Telemetry | undefined> {
  if (option === undefined || option === false) return undefined;
  if (option === true) return Telemetry.open({});
  const o = optionsObject(
    "createCapabilityRegistry",
    "options.telemetry",
    option,
    ["tracerProvider", "meterProvider", "payloads"],
    true,
  );
  const payloads = (o as Record<string, unknown>).payloads;
  if (payloads !== undefined && typeof payloads !== "boolean") {
    throw argumentError("createCapabilityRegistry", "options.telemetry.payloads", "a boolean", payloads);
  }
  for (const [key, method] of [
    ["tracerProvider", "getTracer"],
    ["meterProvider", "getMeter"],
  ] as const) {
    const v = (o as Record<string, unknown>)[key];
    if (v !== undefined && typeof (v as Record<string, unknown> | null)?.[method] !== "function") {
      throw argumentError("createCapabilityRegistry", `options.telemetry.${key}`, `an object with ${method}()`, v);
    }
  }
  return Telemetry.open(o as TelemetryOptions);
}
