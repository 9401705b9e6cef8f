/**
 * What the adapters need from a capability registry: the public façade's
 * `invoke`, `resume`, `descriptors` and `approvals`, nothing else. Written as
 * a structural type so the adapters depend on the façade's contract, not on
 * its internals.
 */

export type Surface = "direct" | "aiSdk" | "mcp" | "workflow" | "test";

/** The trace context a frame carries (W3C; the core validates it). */
export interface TraceContext {
  traceparent?: string;
  tracestate?: string;
}

/**
 * The frame an adapter builds from its authenticated transport. The adapter
 * fixes `surface` itself (SI-2); everything else comes from the app.
 */
export interface AdapterFrame {
  surface?: Surface;
  actor?: unknown;
  context?: unknown;
  trace?: TraceContext;
  requestId?: string;
  agentId?: string;
  sessionId?: string;
  signal?: AbortSignal;
}

/** A portable descriptor as `registry.descriptors()` returns it (core/src/descriptor). */
export interface CapabilityDescriptor {
  id: string;
  toolNames: { aiSdk: string; mcp: string };
  description: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  sideEffect: string;
  risk: string;
  tags: string[];
  idempotent: boolean;
  timeoutMs: number;
  approval: { required: boolean; type?: string; expiresInMs: number };
  discovery: "discoverable" | "contextual";
  annotations: Record<string, unknown>;
}

/** The parts of an approval request the adapters show or act on. */
export interface ApprovalRequestView {
  id: string;
  capabilityId: string;
  status: string;
  type?: string;
  reason?: string;
  createdAt?: number;
  expiresAt?: number;
}

export type InvokeOutcome =
  | { status: "ok"; output: unknown }
  | { status: "approval_required"; request: ApprovalRequestView };

/** An approver's decision as `registry.approvals.approve/reject` take it. */
export interface ApprovalDecisionInput {
  approver?: unknown;
  reason?: string;
}

export interface AdapterRegistry {
  invoke(idOrToolName: string, input: unknown, frame: AdapterFrame): Promise<InvokeOutcome>;
  resume(requestId: string, options: AdapterFrame & { context?: unknown }): Promise<InvokeOutcome>;
  descriptors(options: { surface: Surface }): CapabilityDescriptor[];
  approvals: {
    get(id: string): unknown;
    approve(id: string, decision?: ApprovalDecisionInput): unknown;
    reject(id: string, decision?: ApprovalDecisionInput): unknown;
  };
}

/** A `CapabilityError` as the façade throws it; read by shape, not by class. */
export interface CapabilityErrorLike {
  code: string;
  message: string;
  retryable?: boolean;
  kind?: string;
}

export function isCapabilityError(error: unknown): error is CapabilityErrorLike {
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { message?: unknown }).message === "string"
  );
}
