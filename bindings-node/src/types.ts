/**
 * Public types: capability metadata (spec/000), frames, policies,
 * outcomes, approvals, audit records.
 */
import type { CapabilityError } from "./errors.js";

/** A surface name (generated from the core's `Surface::ALL`). */
export type { ExposureSurface } from "./generated/protocol.js";
import type { ExposureSurface } from "./generated/protocol.js";
export type SideEffect = "none" | "read" | "write" | "destructive" | "external";
export type Risk = "low" | "medium" | "high" | "critical";

/** A frozen view handed to redactors (DESIGN §6). */
export interface RedactionInfo<TContext = unknown> {
  readonly surface: ExposureSurface;
  readonly capabilityId: string;
  readonly actor: Readonly<Actor>;
  readonly context: TContext;
}

export interface Actor {
  id?: string;
  roles?: string[];
  attributes?: Record<string, unknown>;
}

export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/**
 * Everything about an invocation that is not its input. Built by the
 * adapter from the authenticated transport, never from model input (SI-2).
 */
export interface Frame<TContext = unknown> {
  surface: ExposureSurface;
  actor?: Actor;
  /** The application context the procedure's middlewares and handler get. */
  context?: TContext;
  trace?: TraceContext;
  requestId?: string;
  agentId?: string;
  sessionId?: string;
  /** Cancels the call: the handler's signal aborts, the result is CANCELLED. */
  signal?: AbortSignal;
  /** Receives the handler's accepted progress reports (`progress(done, total?)`, checked by the core). */
  onProgress?: (event: { done: number; total?: number }) => void;
}

/** A frozen copy of the frame, as policies see it. */
export type FrozenFrame<TContext = unknown> = Readonly<Omit<Frame<TContext>, "signal" | "actor" | "onProgress">> & {
  readonly actor: Readonly<Actor>;
};

/** What a policy decides. */
export type PolicyDecision =
  | { decision: "allow" }
  | { decision: "abstain" }
  | { decision: "deny"; reason?: string }
  | { decision: "requireApproval"; approvalType?: string; reason?: string; expiresInMs?: number };

/** What a host policy is given: only validated input and a frozen frame (SI-5). */
export interface PolicyRequest<TContext = unknown> {
  readonly capability: { readonly id: string; readonly meta: Readonly<AgentMeta> };
  readonly input: unknown;
  readonly frame: FrozenFrame<TContext>;
  readonly context: TContext;
}

export type PolicyFunction<TContext = unknown> = (
  request: PolicyRequest<TContext>,
) => PolicyDecision | Promise<PolicyDecision>;

/** A host policy with a name (for audit) and an optional shadow mode. */
export interface HostPolicy<TContext = unknown> {
  name?: string;
  mode?: "enforce" | "shadow";
  evaluate: PolicyFunction<TContext>;
}

/**
 * A declarative policy, evaluated natively by the core (wire form in
 * docs/decisions.md): `when` matches tags, risk, sideEffect, surface,
 * actorRole and input predicates such as `"/amount > 1000"`.
 */
export interface DeclarativePolicy {
  name?: string;
  mode?: "enforce" | "shadow";
  when?: {
    tags?: string[];
    risk?: Risk[];
    sideEffect?: SideEffect[];
    surface?: ExposureSurface[];
    actorRole?: string[];
    input?: string[];
  };
  decision: "allow" | "deny" | "requireApproval";
  reason?: string;
  approvalType?: string;
  expiresInMs?: number;
}

export type AgentPolicy<TContext = unknown> = PolicyFunction<TContext> | HostPolicy<TContext> | DeclarativePolicy;

/** The `agent` metadata of a procedure (spec/000). */
export interface AgentMeta<TContext = any> {
  description: string;
  expose: Partial<Record<ExposureSurface, boolean>>;
  sideEffect: SideEffect;
  risk: Risk;
  tags?: string[];
  timeoutMs?: number;
  retry?: {
    maxAttempts: number;
    backoffMs?: number;
    retryOn?: (error: CapabilityError) => boolean;
  };
  idempotent?: boolean;
  approval?: { required?: boolean; type?: string; expiresInMs?: number };
  redact?: {
    output?: (output: any, info: RedactionInfo<TContext>) => unknown;
    approvalInput?: (input: any, info: RedactionInfo<TContext>) => unknown;
  };
  policies?: AgentPolicy<TContext>[];
  adapters?: {
    aiSdk?: { toolName?: string };
    mcp?: { toolName?: string; annotations?: Record<string, unknown> };
  };
  discovery?: "discoverable" | "contextual";
}

/** The oRPC meta shape `agentProcedure` adds. */
export interface AgentProcedureMeta {
  agent?: AgentMeta;
}

export interface ApprovalRequest {
  id: string;
  capabilityId: string;
  /** The full validated input: show it only through `redactApprovalInput`. */
  input: unknown;
  surface: ExposureSurface;
  actor: Actor;
  type?: string;
  reason?: string;
  createdAt: number;
  expiresAt: number;
  /**
   * The status as of the read (get, list, decide): `expired` is a pending
   * or approved request whose `expiresAt` has passed — it can no longer be
   * decided or resumed. A request in an `approval_required` outcome is
   * `pending`.
   */
  status: "pending" | "approved" | "rejected" | "consumed" | "expired";
  decidedBy?: string;
  decidedAt?: number;
  decisionReason?: string;
  /** The session of the call that asked (the frame's `sessionId`). */
  sessionId?: string;
}

/** The result of `invoke` / `resume`; errors reject with `CapabilityError`. */
export type InvokeResult<TOutput = unknown> =
  | { status: "ok"; output: TOutput }
  | { status: "approval_required"; request: ApprovalRequest };

export interface PolicyAuditRecord {
  scope: "runtime" | "capability";
  index: number;
  name?: string;
  mode: "enforce" | "shadow";
  host: boolean;
  decision: string;
  reason?: string;
  approvalType?: string;
  failed: boolean;
}

/** One audit record (camelCase, docs/decisions.md "Audit schema"). */
export interface AuditRecord {
  event: "started" | "finished";
  /** `null` when nothing resolved. */
  capabilityId: string | null;
  /** The id or tool name asked for; absent on resume. */
  requested?: string;
  surface: ExposureSurface;
  actorId: string | null;
  resumed: boolean;
  policies: PolicyAuditRecord[];
  approvalId: string | null;
  attempts: number;
  startedAt: number;
  durationMs: number;
  outcome: string | null;
  stage: number;
  traceparent: string | null;
  tracestate?: string;
  requestId: string | null;
  agentId: string | null;
  sessionId: string | null;
  /**
   * Operators only: the class of a handler's plain error (`TypeError`).
   * Its message is never recorded (it may quote data): the `logger` gets it.
   */
  failure?: string;
  /** The redacted output, only with `payloads` and only on success. */
  output?: unknown;
}

/** A portable descriptor (DESIGN §7), as JSON. */
export interface CapabilityDescriptor {
  id: string;
  toolNames: { aiSdk: string; mcp: string };
  description: string;
  /** JSON Schema of the input, when the procedure's schema can give one. */
  /** The input's JSON Schema; `{type: "object", properties: {}}` (any object) when the capability declares none. */
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  sideEffect: SideEffect;
  risk: Risk;
  tags: string[];
  idempotent: boolean;
  timeoutMs: number;
  approval: { required: boolean; type?: string; expiresInMs: number };
  discovery: "discoverable" | "contextual";
  /** MCP tool annotations: derived hints, then `adapters.mcp.annotations`. */
  annotations: Record<string, unknown>;
}
