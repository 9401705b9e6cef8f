/**
 * MCP adapter: governed capabilities as tools of an `@modelcontextprotocol/sdk`
 * `McpServer`, registered with `registerTool`.
 *
 * - tools/list shows each descriptor as the core built it: description, input
 *   and output JSON Schema, and the annotations the core derived from the
 *   metadata plus `adapters.mcp.annotations` (never recomputed here).
 * - The SDK validates arguments only as "an object"; the pipeline validates
 *   them with the procedure's own schema at stage 4, so there is one
 *   validation and one error shape (`INVALID_INPUT`).
 * - tools/call runs the pipeline on surface `mcp` (SI-2: the adapter fixes the
 *   surface whatever the app's frame says), with the request's abort signal
 *   and the `traceparent`/`tracestate` of `params._meta`.
 * - Outcomes (the core's `mcp` results, as in Python): output → its text (a
 *   string as is, else compact JSON) and, when the tool publishes an object
 *   output schema, `structuredContent`; a `CapabilityError` →
 *   `isError` with `CODE: message` and a hint the model can act on, the code
 *   in `_meta["orpc-agent/error"]`; approval required → `isError` (the call
 *   did not run) with the approval id and what to do, the request in
 *   `_meta["orpc-agent/approval"]`. Once the request is approved, the client
 *   calls the same tool again with `_meta["orpc-agent/approvalId"]` to
 *   resume it; the core resumes only a request for that tool's capability,
 *   made on MCP by the same actor (`throughTool`), re-checks the grant and
 *   runs the stored input.
 */

import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type * as Zod from "zod";

import { toJsonText } from "../json.js";
import { N } from "../native.js";
import type { Frame } from "../types.js";
import { registerTaskTool, type McpTaskOptions } from "./mcp-tasks.js";
import { optionalPeer } from "./optional-peer.js";
import {
  mcpApprovalResult,
  mcpErrorResult,
  mcpOkResult,
  resumeAsRequester,
  type AdapterFrame,
  type AdapterRegistry,
  type ApprovalRequest,
  type CapabilityDescriptor,
  type InvokeResult,
} from "./registry-port.js";

/** `_meta` key a client sets on tools/call to resume an approved request. */
export const MCP_APPROVAL_ID_META = "orpc-agent/approvalId";
/** `_meta` key of an approval-required result: the request the client acts on. */
export const MCP_APPROVAL_META = "orpc-agent/approval";
/** `_meta` key of a capability error result: the error's JSON `{code, message, retryable, kind, details?}`. */
export const MCP_ERROR_META = "orpc-agent/error";

/** The part of the SDK's `RequestHandlerExtra` the adapter reads. */
export interface McpRequestExtra {
  signal: AbortSignal;
  requestId: string | number;
  sessionId?: string;
  _meta?: Record<string, unknown>;
  authInfo?: unknown;
  /** Sends a notification related to this request (the SDK's `extra.sendNotification`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the SDK types it as its ServerNotification union
  sendNotification?: (notification: any) => Promise<void>;
}

export interface RegisterMcpToolsOptions {
  /**
   * The frame of one tools/call, from the authenticated transport (actor,
   * application context, request/agent/session ids). Surface, abort signal
   * and, when the app sets none, trace and MCP session id come from the
   * request. (The JSON-RPC request id is unique per connection only: an app
   * that wants it in audit records sets `requestId: String(extra.requestId)`.)
   */
  frame?: (extra: McpRequestExtra) => AdapterFrame | Promise<AdapterFrame>;
  /** List contextual capabilities too (default: left out, as in the AI SDK adapter). */
  includeContextual?: boolean;
  /**
   * In-band confirmation: an approval request of one of these types (the
   * ones your application lets the end user decide, e.g.
   * `"human-confirmation"`) is put to the person at the client through MCP
   * elicitation when the client declared that capability. Accept records
   * the approval (approver: the frame's actor, under `approverMustDiffer`)
   * and runs the call once; decline or cancel rejects it. A client without
   * elicitation, a decision the core refuses, or no answer before the
   * request expires leaves the ordinary approval-required result.
   */
  confirmInClient?: { approvalTypes: readonly string[] };
  /**
   * MCP tasks (protocol 2025-11-25; the server needs a `taskStore` and the
   * `tasks.requests.tools.call` capability): capabilities that declare an
   * approval are listed with `execution.taskSupport: "optional"`. Asked for
   * a task, such a call returns one at once that reports `input_required`
   * while its approval request is pending, then runs once when it is
   * approved (completed) or fails when it is rejected or expires; a task
   * cancelled meanwhile aborts the call's signal. Asked without one (or
   * with no `task.ttl`), it answers as a plain tool. In a task, the
   * approval waits for a decision made elsewhere: `confirmInClient` asks
   * only in plain calls.
   */
  tasks?: McpTaskOptions;
}

/** Registers the capabilities exposed on surface `mcp`; returns the SDK's handles by tool name. */
export function registerMcpTools(
  server: McpServer,
  registry: AdapterRegistry,
  options: RegisterMcpToolsOptions = {},
): Map<string, RegisteredTool> {
  const z = optionalPeer<typeof Zod>("zod", "registerMcpTools");
  const registered = new Map<string, RegisteredTool>();
  for (const descriptor of registry.descriptors({ surface: "mcp" })) {
    if (descriptor.discovery === "contextual" && options.includeContextual !== true) continue;
    const name = descriptor.toolNames.mcp;
    const tool: ToolTarget = { registry, server, capabilityId: descriptor.id, toolName: name, options };
    const structured = publishesOutputSchema(descriptor);
    if (options.tasks !== undefined && descriptor.approval.required) {
      registered.set(
        name,
        registerTaskTool(server, tool, toolConfig(z, descriptor), structured, descriptor.timeoutMs, options.tasks),
      );
      continue;
    }
    registered.set(
      name,
      server.registerTool(name, toolConfig(z, descriptor), (args: Record<string, unknown>, extra: McpRequestExtra) =>
        callGoverned(tool, structured, args, extra),
      ),
    );
  }
  return registered;
}

/** MCP structured content is an object: other output schemas are not published (their outputs travel as text). */
function publishesOutputSchema(descriptor: CapabilityDescriptor): boolean {
  return descriptor.outputSchema?.type === "object";
}

function toolConfig(z: typeof Zod, descriptor: CapabilityDescriptor) {
  const outputSchema = descriptor.outputSchema;
  return {
    description: descriptor.description,
    inputSchema: publishedSchema(z, descriptor.inputSchema),
    ...(outputSchema !== undefined && publishesOutputSchema(descriptor)
      ? { outputSchema: publishedSchema(z, outputSchema) }
      : {}),
    annotations: descriptor.annotations,
  };
}

/**
 * A schema the SDK accepts as any object at validation time (unknown keys
 * kept: the pipeline validates) and lists as exactly the descriptor's JSON
 * Schema: zod's `toJSONSchema` override (`_zod.toJSONSchema`) replaces the
 * loose object's own `additionalProperties: {}`, which would make every tool
 * open to any key (not portable). The SDK's draft-07 `$schema`, which zod
 * writes first, is cleared when the descriptor has none (zod's output is
 * JSON: an undefined key is dropped). A copy per listing: the SDK's
 * conversion may rewrite the object it gets.
 */
function publishedSchema(z: typeof Zod, jsonSchema: Record<string, unknown>) {
  const schema = z.looseObject({});
  const text = JSON.stringify(jsonSchema);
  schema._zod.toJSONSchema = () => ({ $schema: undefined, ...JSON.parse(text) });
  return schema;
}

/**
 * One tools/call. Written with `then` rather than `async`/`await`: this is the
 * hot path of every MCP call, and each `await` is another microtask turn.
 */
/** What one registered tool's calls share. */
export interface ToolTarget {
  registry: AdapterRegistry;
  server: McpServer;
  capabilityId: string;
  toolName: string;
  options: RegisterMcpToolsOptions;
}

export function callGoverned(
  tool: ToolTarget,
  structured: boolean,
  args: Record<string, unknown>,
  extra: McpRequestExtra,
): Promise<CallToolResult> {
  let fromApp: AdapterFrame | Promise<AdapterFrame> | undefined;
  try {
    fromApp = tool.options.frame?.(extra);
  } catch (error) {
    return Promise.resolve(errorResult(error));
  }
  if (fromApp instanceof Promise) {
    return fromApp.then((app) => run(tool, structured, args, extra, app), errorResult);
  }
  return run(tool, structured, args, extra, fromApp);
}

/**
 * Every tools/call settles to a result the adapter made: anything that
 * throws on the way (the app's frame getters, an output with no JSON form)
 * becomes an error result, never a rejection — the SDK would send a
 * rejection's message to the model as it is.
 */
function run(
  tool: ToolTarget,
  structured: boolean,
  args: Record<string, unknown>,
  extra: McpRequestExtra,
  app: AdapterFrame | undefined,
): Promise<CallToolResult> {
  let outcome: Promise<InvokeResult>;
  let frame: Frame;
  try {
    frame = frameFor(extra, app ?? {});
    outcome = governedOutcome(tool, args, extra, frame);
  } catch (error) {
    return Promise.resolve(errorResult(error));
  }
  return outcome.then(
    (o) =>
      o.status === "approval_required" && tool.options.confirmInClient !== undefined
        ? confirmInClient(tool, o.request, frame, extra, structured).catch(errorResult)
        : toResult(o, structured),
    errorResult,
  );
}

/** The call, or the resume of the request `_meta` names. */
export function governedOutcome(
  tool: ToolTarget,
  args: Record<string, unknown>,
  extra: McpRequestExtra,
  frame: Frame,
): Promise<InvokeResult> {
  const approvalId = extra._meta?.[MCP_APPROVAL_ID_META];
  return typeof approvalId === "string"
    ? resumeAsCaller(tool, approvalId, frame)
    : tool.registry.invoke(tool.capabilityId, args, frame);
}

/** The client names the request id: the core resumes it only if it is this tool's, made on MCP by this caller's actor. */
export function resumeAsCaller(tool: ToolTarget, approvalId: string, frame: Frame): Promise<InvokeResult> {
  return resumeAsRequester(tool.registry, approvalId, frame, tool.capabilityId);
}

/**
 * In-band confirmation (`confirmInClient`): the core says whether this
 * request is put to the person at the client, writes the question, and
 * says what the answer decides; the decision and the single resume are the
 * core's too. Anything short of a decision the core recorded leaves the
 * request pending and the ordinary approval-required result.
 */
async function confirmInClient(
  tool: ToolTarget,
  request: ApprovalRequest,
  frame: Frame,
  extra: McpRequestExtra,
  structured: boolean,
): Promise<CallToolResult> {
  const low = tool.server.server;
  const types = tool.options.confirmInClient?.approvalTypes ?? [];
  const clientElicits = low.getClientCapabilities()?.elicitation !== undefined;
  if (!N.mcpElicits(request.type ?? null, [...types], clientElicits)) return approvalResult(request);
  const view = await tool.registry.redactApprovalInput(request, { context: frame.context });
  const params = JSON.parse(
    N.mcpElicitationParams(tool.toolName, request.id, request.reason ?? null, toJsonText(view ?? null)),
  );
  let action: string;
  try {
    // Bounded by the request's own expiry and the call's signal.
    const timeout = Math.max(1, request.expiresAt - Date.now());
    action = (await low.elicitInput(params, { signal: extra.signal, timeout })).action;
  } catch {
    return approvalResult(request); // no answer: the request waits for another approver
  }
  const approver = frame.actor?.id;
  try {
    if (N.mcpElicitationApproves(action)) await tool.registry.approvals.approve(request.id, { approver });
    else await tool.registry.approvals.reject(request.id, { approver, reason: N.mcpElicitationDeclined() });
  } catch {
    return approvalResult(request); // the core refused the decision (e.g. approverMustDiffer)
  }
  // Approved: runs once; rejected: the core's APPROVAL_REJECTED.
  return toResult(await resumeAsCaller(tool, request.id, frame), structured);
}

export function frameFor(extra: McpRequestExtra, app: AdapterFrame): Frame {
  // One literal of fixed shape (not a spread of the app's object): this runs
  // on every tools/call, and a shape that varies with the app's frame costs
  // more than copying the known fields.
  const frame: Frame = {
    surface: "mcp",
    actor: app.actor,
    context: app.context,
    trace: app.trace,
    requestId: app.requestId,
    agentId: app.agentId,
    sessionId: app.sessionId ?? extra.sessionId,
    signal: app.signal === undefined ? extra.signal : AbortSignal.any([app.signal, extra.signal]),
    onProgress: app.onProgress,
  };
  if (frame.trace === undefined) {
    const traceparent = extra._meta?.traceparent;
    const tracestate = extra._meta?.tracestate;
    if (typeof traceparent === "string") {
      // Validated (and dropped if invalid) by the core at stage 3.
      frame.trace = typeof tracestate === "string" ? { traceparent, tracestate } : { traceparent };
    }
  }
  const token = extra._meta?.progressToken;
  if (
    frame.onProgress === undefined &&
    (typeof token === "string" || typeof token === "number") &&
    extra.sendNotification
  ) {
    frame.onProgress = progressNotifier(extra, token);
  }
  return frame;
}

/**
 * Accepted progress reports (checked by the core) as MCP
 * `notifications/progress` for the client's `progressToken`. A failed send
 * is ignored: progress is advisory.
 */
function progressNotifier(extra: McpRequestExtra, progressToken: string | number): NonNullable<Frame["onProgress"]> {
  const send = extra.sendNotification!;
  return ({ done, total }) => {
    const params: Record<string, unknown> = { progressToken, progress: done };
    if (total !== undefined) params.total = total;
    send({ method: "notifications/progress", params }).catch(() => undefined);
  };
}

/** The core's result for the outcome (`orpc_agent_core::mcp`, as in Python). */
export function toResult(outcome: InvokeResult, structured: boolean): CallToolResult {
  if (outcome.status === "approval_required") return approvalResult(outcome.request);
  return mcpOkResult(outcome.output, structured);
}

/** The core's answer (the same words in Node and Python: `orpc_agent_core::mcp`). */
const approvalResult = (request: ApprovalRequest): CallToolResult => mcpApprovalResult(request);

/** The core's answer; only a CapabilityError's message is model-safe, anything else is INTERNAL. */
export const errorResult = (error: unknown): CallToolResult => mcpErrorResult(error);
