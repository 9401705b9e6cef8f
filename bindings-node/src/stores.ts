/**
 * Approval stores and audit sinks that live in PostgreSQL (issue 8): one
 * approval queue shared by every instance of an app.
 *
 * PostgreSQL calls really wait, so they are the only asynchronous
 * crossings into Rust (`native/postgres*.rs`): opening the pool, the two
 * store steps of an invocation (`PersistApproval`, `ConsumeApproval`) and
 * the approval UI's calls. A registry on the memory or SQLite store never
 * reaches any of them — its store steps run inside the synchronous calls.
 */
import { argumentError, decideArguments, listFilterJson, requireString } from "./arguments.js";
import { call, fromNative } from "./errors.js";
import { parseCoreJson, toJsonText } from "./json.js";
import { N } from "./native.js";
import type { ApprovalRequest, AuditRecord } from "./types.js";

/** How to reach PostgreSQL: a URL, or a URL with pool and TLS settings. */
export type PostgresConnection = string | PostgresConnectionOptions;

export interface PostgresConnectionOptions {
  /** `postgresql://user@host:port/db?sslmode=…` or a libpq key/value string. */
  url: string;
  /** Largest number of pooled connections (default 16). */
  maxConnections?: number;
  /** Wait for a pooled or new connection before failing (default 10 000 ms). */
  connectTimeoutMs?: number;
  /** The server cancels a statement of the store that runs longer (default 30 000 ms; null: the server's setting). */
  statementTimeoutMs?: number | null;
  /** Pending requests one actor may have waiting (default 1000). */
  maxPendingPerActor?: number;
  /** Whose clock decides expiry: the database's (default; use it whenever several instances share the store) or the caller's. */
  clock?: "database" | "caller";
  /** Certificate checks when the URL asks for TLS: the system trust store (default), a private CA, or none (encrypt only). */
  tls?: "system" | "noVerify" | { caPem: string };
  /** Audit sinks: records queued before new ones are dropped (default 10 000). */
  auditQueue?: number;
}

/** One page of approval requests and where the next one starts (`null`: this was the last). */
export interface ApprovalPage {
  requests: ApprovalRequest[];
  nextCursor: string | null;
}

function split(conn: PostgresConnection): [string, string] {
  if (typeof conn === "string") return [conn, "null"];
  if (conn === null || typeof conn !== "object" || typeof conn.url !== "string") {
    // Let the core word the error (INVALID_INPUT), like any bad store option.
    return ["", "null"];
  }
  const { url, ...options } = conn;
  return [url, JSON.stringify(options)];
}

/**
 * The `{postgres: …}` connection of a store or audit option, if it is one:
 * `postgres` and only the `alongside` keys. Anything else goes to the core,
 * which names the problem.
 */
export function postgresOf(option: unknown, alongside: readonly string[] = []): PostgresConnection | undefined {
  if (option === null || typeof option !== "object" || !("postgres" in option)) return undefined;
  if (Object.keys(option).some((k) => k !== "postgres" && !alongside.includes(k))) return undefined;
  return (option as { postgres: PostgresConnection }).postgres;
}

/**
 * Builds the native registry on a PostgreSQL store: connects (pool +
 * migrations), then builds. Rejects with `CapabilityError` (INTERNAL,
 * `details.store` = the backend failure kind) when the database cannot be
 * reached, or `RegistryValidationError` for the declarations.
 */
export async function buildOnPostgres(
  conn: PostgresConnection,
  decls: string,
  options: string,
  audit: boolean,
  payloads: boolean,
): Promise<number> {
  const [url, opts] = split(conn);
  if (url === "") {
    // The core's wording for a malformed store option.
    call(() => N.registryBuild(decls, options, JSON.stringify({ postgres: "" }), audit, payloads));
  }
  const store = await settle(() => N.postgresOpen(url, opts));
  return call(() => N.registryBuildPostgres(decls, options, store, audit, payloads));
}

/** Counters of a PostgreSQL audit sink. */
export interface AuditSinkStats {
  /** Records written to `orpc_audit`. */
  written: number;
  /** Records dropped because the queue was full (the database slow or down). */
  dropped: number;
  /** Records the database refused after retries. */
  failed: number;
}

/**
 * Writes every audit record of a registry to PostgreSQL (`orpc_audit`, one
 * row per record) in the background: an invocation never waits for, nor
 * fails because of, its audit.
 */
export class PostgresAuditSink {
  readonly #id: number;

  /** @internal use `PostgresAuditSink.open` or the registry's `audit: {postgres}` */
  constructor(id: number) {
    this.#id = id;
  }

  /** Connects (its own small pool; migrations applied). */
  static async open(conn: PostgresConnection): Promise<PostgresAuditSink> {
    const [url, opts] = split(conn);
    if (url === "") {
      throw argumentError(
        "PostgresAuditSink.open",
        "the connection (audit.postgres)",
        "a PostgreSQL URL (a string) or { url, … } with a string url",
        typeof conn === "object" && conn !== null && !Array.isArray(conn) ? conn.url : conn,
      );
    }
    return new PostgresAuditSink(await settle(() => N.postgresAuditOpen(url, opts)));
  }

  /** @internal the native sink's handle */
  get handle(): number {
    return this.#id;
  }

  /**
   * Queues one record; never waits. A record's audited output may hold a
   * BigInt (an integer past 2^53, as the core recorded it): written exactly.
   */
  record(record: AuditRecord): void {
    N.postgresAuditRecord(this.#id, toJsonText(record));
  }

  stats(): AuditSinkStats {
    return JSON.parse(call(() => N.postgresAuditStats(this.#id)));
  }

  /** Resolves once every record queued before the call is written (or counted as failed). */
  async flush(): Promise<void> {
    await N.postgresAuditFlush(this.#id);
  }

  /** Stops accepting records; the writer finishes what is queued. */
  close(): void {
    N.postgresAuditClose(this.#id);
  }
}

/** Performs a store step of a store that waits; resolves to the next step (packed). */
export function storeStep(reg: number, h: number): Promise<number> {
  return settle(() => N.storeStep(reg, h, Date.now()));
}

/** Runs a native call that returns a promise; what it throws (synchronously or not) is mapped. */
async function settle<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    throw fromNative(e);
  }
}

/** The approval UI's operations on a store that waits. */
export function waitingApprovals(handle: number) {
  const decide = (approve: boolean) => async (id: string, o?: { approver?: unknown; reason?: string }) => {
    const a = decideArguments(`registry.approvals.${approve ? "approve" : "reject"}`, id, o);
    return parseCoreJson(
      await settle(() => N.approvalDecideAsync(handle, a.id, approve, a.approver, a.reason, Date.now())),
    ) as ApprovalRequest;
  };
  const pageOf = async (json: string): Promise<ApprovalPage> =>
    parseCoreJson(await settle(() => N.approvalPageAsync(handle, json, Date.now())));
  return {
    get: async (id: string): Promise<ApprovalRequest | null> => {
      requireString("registry.approvals.get", "the request id", id);
      const text = await settle(() => N.approvalGetAsync(handle, id, Date.now()));
      return text == null ? null : parseCoreJson(text);
    },
    list: async (filter?: object) => (await pageOf(listFilterJson("registry.approvals.list", filter))).requests,
    page: async (filter?: object) => pageOf(listFilterJson("registry.approvals.page", filter)),
    approve: decide(true),
    reject: decide(false),
  };
}

/** `approvals.page` on a synchronous store (`filter`: the checked filter's JSON). */
export function syncPage(handle: number, filter: string): ApprovalPage {
  return parseCoreJson(call(() => N.approvalPage(handle, filter, Date.now())));
}
