/**
 * What the adapters take from the façade: the registry, its frame and
 * outcome types, and `CapabilityError`. Adapters use only the public API
 * (`invoke`, `resume`, `descriptors`, `approvals`).
 */

import type { Logger } from "../create-registry.js";
import { CapabilityError } from "../errors.js";
import type { CapabilityRegistry } from "../registry.js";
import type { ExposureSurface, Frame, InvokeResult } from "../types.js";

export { CapabilityError };
export { MCP_META_KEYS, mcpApprovalResult, mcpErrorResult, mcpOkResult, modelErrorText } from "../mcp-answer.js";
export type { ApprovalRequest, CapabilityDescriptor, InvokeResult, TraceContext } from "../types.js";
export type { ResumeOptions } from "../approvals.js";

/** Any registry, whatever its application context type. */
export type AdapterRegistry = CapabilityRegistry<any>;

/**
 * The frame an app gives an adapter. The adapter fixes the surface (SI-2),
 * so an app's `surface` is ignored.
 */
export type AdapterFrame<TContext = unknown> = Omit<Frame<TContext>, "surface"> & { surface?: ExposureSurface };

/**
 * Resumes a request the way every adapter does: only as the requester of
 * `frame` (its surface and actor) and only for `throughTool` (a capability
 * id or tool name) — the core refuses anything else as APPROVAL_NOT_FOUND.
 */
export function resumeAsRequester(
  registry: AdapterRegistry,
  requestId: string,
  frame: Frame,
  throughTool: string,
): Promise<InvokeResult> {
  return registry.resume(requestId, {
    context: frame.context,
    signal: frame.signal,
    trace: frame.trace,
    requestId: frame.requestId,
    agentId: frame.agentId,
    sessionId: frame.sessionId,
    // The resumed handler's progress reaches the caller as an invoked one's does.
    onProgress: frame.onProgress,
    asRequester: { surface: frame.surface, actor: frame.actor ?? {} },
    throughTool,
  });
}

/**
 * Tells the operator, through the registry's `logger` (default `console`),
 * that `what` failed in an adapter with something that is not the
 * library's error (the app's frame function threw, a transport or task
 * store failed, an output had no JSON form): the model got INTERNAL and
 * nothing of it, so the real error goes here, as Python's adapters log it.
 * A `CapabilityError` is the call's answer, not a failure; `undefined` is
 * the adapter asking for the INTERNAL text itself. A logger that throws is
 * ignored.
 */
export function logAdapterFailure(registry: AdapterRegistry, capabilityId: string, what: string, error: unknown): void {
  if (error === undefined || error instanceof CapabilityError) return;
  const logger: Logger | undefined = (registry as { logger?: Logger }).logger;
  if (logger === undefined) return;
  try {
    logger.warn(
      `orpc-agent: ${what} of capability "${capabilityId}" failed in an adapter; the model was only told that it failed`,
      error,
    );
  } catch {
    // the operator's logger is not the call's business
  }
}
