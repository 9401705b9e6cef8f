/**
 * What the adapters take from the façade: the registry, its frame and
 * outcome types, and `CapabilityError`. Adapters use only the public API
 * (`invoke`, `resume`, `descriptors`, `approvals`).
 */

import type { CapabilityRegistry } from "../registry.js";
import type { ExposureSurface, Frame } from "../types.js";

export { CapabilityError } from "../errors.js";
export { MCP_META_KEYS, mcpApprovalResult, mcpErrorResult, mcpOkResult } from "../mcp-answer.js";
export type { ApprovalRequest, CapabilityDescriptor, InvokeResult, TraceContext } from "../types.js";
export type { ResumeOptions } from "../registry.js";

/** Any registry, whatever its application context type. */
export type AdapterRegistry = CapabilityRegistry<any>;

/**
 * The frame an app gives an adapter. The adapter fixes the surface (SI-2),
 * so an app's `surface` is ignored.
 */
export type AdapterFrame<TContext = unknown> = Omit<Frame<TContext>, "surface"> & { surface?: ExposureSurface };
