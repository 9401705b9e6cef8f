/**
 * One MCP tools/call of the adapter (`mcp.ts` registers the tools): the
 * frame from the request (`mcp-frame.ts`), the governed outcome (the call, or the resume of
 * the request `_meta` names), in-band confirmation, and the core's result
 * for the outcome; also the `_meta` keys a client reads and sets. Apart from
 * `mcp.ts` so the listing and the call path (measured: `callGoverned` →
 * `run` → `governedOutcome`) each stay whole; `mcp-tasks.ts` runs a task's
 * call with the same steps.
 */

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { toJsonText } from "../json.js";
import { N } from "../native.js";
import type { Frame } from "../types.js";
import type { McpRequestExtra, RegisterMcpToolsOptions } from "./mcp.js";
import { frameFor, settledWithin } from "./mcp-frame.js";
import {
  CapabilityError,
  mcpApprovalResult,
  mcpErrorResult,
  mcpOkResult,
  logAdapterFailure,
  resumeAsRequester,
  type AdapterFrame,
  type AdapterRegistry,
  type ApprovalRequest,
  type InvokeResult,
} from "./registry-port.js";

/** `_meta` key a client sets on tools/call to resume an approved request. */
export const MCP_APPROVAL_ID_META = "orpc-agent/approvalId";
/** `_meta` key of an approval-required result: the request the client acts on. */
export const MCP_APPROVAL_META = "orpc-agent/approval";
/** `_meta` key of a capability error result: the error's JSON `{code, message, retryable, kind, details?}`. */
export const MCP_ERROR_META = "orpc-agent/error";

/** What one registered tool's calls share. */
export interface ToolTarget {
  registry: AdapterRegistry;
  server: McpServer;
  capabilityId: string;
  toolName: string;
  options: RegisterMcpToolsOptions;
  /** The capability's deadline: what an async frame factory may take at most. */
  timeoutMs: number;
}

/**
 * One tools/call. Written with `then` rather than `async`/`await`: this is the
 * hot path of every MCP call, and each `await` is another microtask turn.
 */
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
    return Promise.resolve(failedResult(tool, error));
  }
  if (fromApp instanceof Promise) {
    return settledWithin(fromApp, tool.timeoutMs, extra.signal).then(
      (app) => run(tool, structured, args, extra, app),
      (error: unknown) => failedResult(tool, error),
    );
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
    return Promise.resolve(failedResult(tool, error));
  }
  const failed = (error: unknown) => failedResult(tool, error);
  return outcome.then(
    (o) =>
      o.status === "approval_required" && tool.options.confirmInClient !== undefined
        ? confirmInClient(tool, o.request, frame, extra, structured).catch(failed)
        : toResult(tool, o, structured),
    failed,
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
 * core's too. No answer, or a decision refused under `approverMustDiffer`,
 * leaves the request pending and the ordinary approval-required result; a
 * request decided elsewhere meanwhile answers with the core's resume.
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
  let viewText: string;
  try {
    viewText = toJsonText(view ?? null);
  } catch (error) {
    // The redactor's view has no JSON form: the person cannot be shown it,
    // so nobody is asked here (the request waits, as for a client that
    // cannot be asked); not the caller's arguments to fix.
    const why = error instanceof Error ? error.message : "no JSON form"; // the library's words, no data
    logAdapterFailure(tool.registry, tool.capabilityId, "the approval view's JSON form", new TypeError(why));
    return approvalResult(request);
  }
  const params = JSON.parse(N.mcpElicitationParams(tool.toolName, request.id, request.reason ?? null, viewText));
  let action: string;
  try {
    // Bounded by the request's own expiry and the call's signal.
    // (At most `setTimeout`'s range, 2^31 − 1 ms: past it the SDK's timer fires at once.)
    const timeout = Math.min(Math.max(1, request.expiresAt - Date.now()), 2 ** 31 - 1);
    action = (await low.elicitInput(params, { signal: extra.signal, timeout })).action;
  } catch {
    return approvalResult(request); // no answer: the request waits for another approver
  }
  const approver = frame.actor?.id;
  const approves = N.mcpElicitationApproves(action);
  try {
    if (approves) await tool.registry.approvals.approve(request.id, { approver });
    else await tool.registry.approvals.reject(request.id, { approver, reason: N.mcpElicitationDeclined() });
  } catch (error) {
    // The core refused the decision. Decided elsewhere (a twin call's
    // accept, an approval UI), expired or gone: what became of the request
    // is the core's resume (never a run the person declined); otherwise
    // (approverMustDiffer) it waits.
    const resumes = error instanceof CapabilityError && N.mcpRefusedDecisionResumes(error.code, approves);
    if (!resumes) return approvalResult(request);
  }
  // Approved: runs once; rejected: the core's APPROVAL_REJECTED; decided elsewhere: what became of it.
  return toResult(tool, await resumeAsCaller(tool, request.id, frame), structured);
}

/** The core's result for the outcome (`orpc_agent_core::mcp`, as in Python). */
export function toResult(tool: ToolTarget, outcome: InvokeResult, structured: boolean): CallToolResult {
  if (outcome.status === "approval_required") return approvalResult(outcome.request);
  return mcpOkResult(outcome.output, structured, (error) =>
    logAdapterFailure(tool.registry, tool.capabilityId, "the output's JSON form", error),
  );
}

/** The core's answer (the same words in Node and Python: `orpc_agent_core::mcp`). */
const approvalResult = (request: ApprovalRequest): CallToolResult => mcpApprovalResult(request);

/** The core's answer; only a CapabilityError's message is model-safe, anything else is INTERNAL. */
export const errorResult = (error: unknown): CallToolResult => mcpErrorResult(error);

/** `errorResult`, the operator told what anything else was (`logAdapterFailure`). */
export function failedResult(tool: ToolTarget, error: unknown): CallToolResult {
  logAdapterFailure(tool.registry, tool.capabilityId, "the tool call", error);
  try {
    return mcpErrorResult(error);
  } catch (unreadable) {
    // The app's error could not be read (a getter that throws, a code that
    // is no string): INTERNAL, never the SDK's wrapping of what was thrown.
    logAdapterFailure(tool.registry, tool.capabilityId, "the tool call's error", unreadable);
    return mcpErrorResult(undefined);
  }
}
