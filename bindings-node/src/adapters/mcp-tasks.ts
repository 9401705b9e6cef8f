/**
 * MCP tasks for approval-gated calls (protocol 2025-11-25: task-augmented
 * `tools/call`, through the SDK's experimental task API and the server's
 * `taskStore`).
 *
 * A capability that declares an approval is listed with
 * `execution.taskSupport: "optional"`. A client that asks for a task gets
 * one at once; the call runs in it. When the core asks for approval, the
 * task reports `input_required` with the core's waiting message and waits
 * until the request is no longer pending (read through the registry's
 * approvals, so a decision made in another process counts); then the core's
 * resume — limited to this tool and caller, once — gives the result: the
 * approved call's output completes the task, a rejection or an expiry
 * (`APPROVAL_REJECTED`, `APPROVAL_EXPIRED`) fails it (`mcp::task_status`).
 * A call that does not ask for a task is answered as by a plain tool (the
 * SDK reads it from a task finished before it returns).
 */

import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type {
  CreateTaskRequestHandlerExtra,
  TaskRequestHandlerExtra,
} from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { toJsonText } from "../json.js";
import { N } from "../native.js";
import type { ApprovalRequest } from "./registry-port.js";
import {
  callGoverned,
  errorResult,
  frameFor,
  governedOutcome,
  resumeAsCaller,
  toResult,
  type ToolTarget,
} from "./mcp.js";

/** `registerMcpTools({tasks})`. */
export interface McpTaskOptions {
  /** How often a waiting task reads its approval request (ms, default 1 000). */
  approvalPollMs?: number;
}

/**
 * How long the SDK keeps the finished task of a call that did not ask for
 * one (it reads the result from it before answering): a minute, so a store
 * does not fill up with tasks nobody asked for.
 */
const PLAIN_CALL_TASK_TTL_MS = 60_000;
/** A task is kept at least this long after its approval can expire, so its result can be read. */
const RESULT_RETENTION_MS = 60_000;

/** Registers one approval-gated tool as a task tool (`taskSupport: "optional"`). */
export function registerTaskTool(
  server: McpServer,
  tool: ToolTarget,
  config: Record<string, unknown>,
  structured: boolean,
  waitAtMostMs: number,
  options: McpTaskOptions,
): RegisteredTool {
  return server.experimental.tasks.registerToolTask(
    tool.toolName,
    { ...config, execution: { taskSupport: "optional" } } as never,
    {
      createTask: ((args: Record<string, unknown>, extra: CreateTaskRequestHandlerExtra) =>
        createTask(tool, structured, args, extra, waitAtMostMs, options)) as never,
      getTask: ((_args: unknown, extra: TaskRequestHandlerExtra) => extra.taskStore.getTask(extra.taskId)) as never,
      getTaskResult: ((_args: unknown, extra: TaskRequestHandlerExtra) =>
        extra.taskStore.getTaskResult(extra.taskId)) as never,
    },
  );
}

async function createTask(
  tool: ToolTarget,
  structured: boolean,
  args: Record<string, unknown>,
  extra: CreateTaskRequestHandlerExtra,
  waitAtMostMs: number,
  options: McpTaskOptions,
) {
  const store = extra.taskStore;
  // The SDK gives a task tool's handler no other sign of a task-augmented
  // call than the ttl it asked for; a call without one is a plain call.
  if (extra.taskRequestedTtl === undefined) {
    const result = await callGoverned(tool, structured, args, extra);
    const task = await store.createTask({ ttl: PLAIN_CALL_TASK_TTL_MS });
    await store.storeTaskResult(task.taskId, taskStatus(result), result);
    return { task: (await store.getTask(task.taskId)) ?? task };
  }
  const ttl = Math.max(extra.taskRequestedTtl ?? 0, waitAtMostMs + RESULT_RETENTION_MS);
  const task = await store.createTask({ ttl });
  // The tools/call request ends when the task is returned: the task's work
  // runs without the request's abort signal.
  const detached = { ...extra, signal: new AbortController().signal };
  void runInTask(tool, structured, args, detached, task.taskId, options).catch(() => undefined);
  return { task };
}

async function runInTask(
  tool: ToolTarget,
  structured: boolean,
  args: Record<string, unknown>,
  extra: CreateTaskRequestHandlerExtra,
  taskId: string,
  options: McpTaskOptions,
): Promise<void> {
  const store = extra.taskStore;
  let result: CallToolResult;
  try {
    const app = await tool.options.frame?.(extra);
    const frame = frameFor(extra, app ?? {});
    const outcome = await governedOutcome(tool, args, extra, frame);
    if (outcome.status === "approval_required") {
      const request = outcome.request;
      await store.updateTaskStatus(taskId, "input_required", N.mcpTaskWaitingMessage(toJsonText(request)));
      if (!(await waitForDecision(tool, request, store, taskId, options.approvalPollMs ?? 1000))) return;
      result = toResult(await resumeAsCaller(tool, request.id, frame), structured);
    } else {
      result = toResult(outcome, structured);
    }
  } catch (error) {
    result = errorResult(error);
  }
  await store.storeTaskResult(taskId, taskStatus(result), result);
}

/**
 * Waits until the core no longer reads the request as pending (decided,
 * or expired as of the read); false when the task went away or was
 * cancelled meanwhile (the request then stays as it is).
 */
async function waitForDecision(
  tool: ToolTarget,
  request: ApprovalRequest,
  store: CreateTaskRequestHandlerExtra["taskStore"],
  taskId: string,
  pollMs: number,
): Promise<boolean> {
  for (;;) {
    // Not before the next poll, nor much after the request can expire.
    const wake = Math.max(1, Math.min(pollMs, request.expiresAt - Date.now() + 1));
    await new Promise((resolve) => setTimeout(resolve, wake).unref());
    const task = await store.getTask(taskId);
    if (task === null || task.status === "cancelled") return false;
    const current = await tool.registry.approvals.get(request.id);
    if (current?.status !== "pending") return true;
  }
}

/** The core's task status for a finished call's result. */
const taskStatus = (result: CallToolResult) => N.mcpTaskStatus(toJsonText(result)) as "completed" | "failed";
