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
 * A call that does not ask for a task is answered as by a plain tool.
 */

import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type {
  CreateTaskRequestHandlerExtra,
  TaskRequestHandlerExtra,
} from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { toJsonText } from "../json.js";
import { N } from "../native.js";
import type { Frame } from "../types.js";
import { logAdapterFailure, type ApprovalRequest } from "./registry-port.js";
import {
  callGoverned,
  errorResult,
  failedResult,
  governedOutcome,
  resumeAsCaller,
  toResult,
  type ToolTarget,
} from "./mcp-call.js";
import { frameFor, settledWithin } from "./mcp-frame.js";

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
/** A task is kept this long after its approved call can have finished, so its result can be read. */
const RESULT_RETENTION_MS = 60_000;

/** Registers one approval-gated tool as a task tool (`taskSupport: "optional"`). */
export function registerTaskTool(
  server: McpServer,
  tool: ToolTarget,
  config: Record<string, unknown>,
  structured: boolean,
  timeoutMs: number,
  options: McpTaskOptions,
): RegisteredTool {
  return server.experimental.tasks.registerToolTask(
    tool.toolName,
    { ...config, execution: { taskSupport: "optional" } } as never,
    {
      createTask: ((args: Record<string, unknown>, extra: CreateTaskRequestHandlerExtra) =>
        storeCall(tool, () => createTask(tool, structured, args, extra, timeoutMs, options))) as never,
      getTask: ((_args: unknown, extra: TaskRequestHandlerExtra) =>
        storeCall(tool, () => extra.taskStore.getTask(extra.taskId))) as never,
      getTaskResult: ((_args: unknown, extra: TaskRequestHandlerExtra) =>
        storeCall(tool, () => extra.taskStore.getTaskResult(extra.taskId))) as never,
    },
  );
}

/**
 * A call into the app's task store: the SDK sends a thrown error's message
 * to the client as it is, so a store's failure (a connection string, a
 * key) leaves as the core's INTERNAL text instead.
 */
async function storeCall<T>(tool: ToolTarget, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    logAdapterFailure(tool.registry, tool.capabilityId, "the MCP task store", error);
    const text = errorResult(undefined).content[0];
    throw new Error(text?.type === "text" ? text.text : "INTERNAL");
  }
}

async function createTask(
  tool: ToolTarget,
  structured: boolean,
  args: Record<string, unknown>,
  extra: CreateTaskRequestHandlerExtra,
  timeoutMs: number,
  options: McpTaskOptions,
) {
  const store = extra.taskStore;
  // The SDK gives a task tool's handler no other sign of a task-augmented
  // call than the ttl it asked for; a call without one is a plain call.
  if (extra.taskRequestedTtl === undefined) {
    // The task first: a store that fails then fails the call before anything
    // ran (the model would otherwise be told a call failed that did run, and
    // its retry open a second request).
    const task = await store.createTask({ ttl: PLAIN_CALL_TASK_TTL_MS });
    const result = await callGoverned(tool, structured, args, extra);
    await store.storeTaskResult(task.taskId, taskStatus(result), result);
    return { task: await store.getTask(task.taskId) };
  }
  // The tools/call request ends when the task is returned: the task's work
  // runs under its own signal, aborted if the task is cancelled.
  const controller = new AbortController();
  const detached = { ...extra, signal: controller.signal };
  // Up to the gate first, so the task is made knowing how long the request
  // can wait (a policy may set a longer expiry than the declaration's); named
  // by `_meta`, an approved request runs here. Settled (its result) or waiting.
  let settled: CallToolResult | undefined;
  let waiting: { frame: Frame; request: ApprovalRequest } | undefined;
  try {
    const app = await settledWithin(Promise.resolve(tool.options.frame?.(detached)), tool.timeoutMs, detached.signal);
    const frame = frameFor(detached, app ?? {});
    const outcome = await governedOutcome(tool, args, detached, frame);
    if (outcome.status === "approval_required") waiting = { frame, request: outcome.request };
    else settled = toResult(tool, outcome, structured);
  } catch (error) {
    settled = failedResult(tool, error);
  }
  const waitMs = waiting === undefined ? 0 : Math.max(0, waiting.request.expiresAt - Date.now());
  // Kept until the approved call can have finished and its result been read.
  // At most `setTimeout`'s range (2^31 − 1 ms, about 24.8 days): a task
  // store's timer past it fires at once, and the task would be gone.
  const ttl = Math.min(Math.max(extra.taskRequestedTtl ?? 0, waitMs + timeoutMs + RESULT_RETENTION_MS), 2 ** 31 - 1);
  const task = await store.createTask({ ttl });
  if (waiting === undefined) {
    const result = settled ?? errorResult(undefined);
    await store.storeTaskResult(task.taskId, taskStatus(result), result);
    return { task: await store.getTask(task.taskId) };
  }
  const { frame, request } = waiting;
  await store.updateTaskStatus(task.taskId, "input_required", N.mcpTaskWaitingMessage(toJsonText(request)));
  const pollMs = options.approvalPollMs ?? 1000;
  void resumeWhenDecided(tool, structured, request, frame, store, task.taskId, controller, pollMs).catch(
    () => undefined,
  );
  return { task: await store.getTask(task.taskId) };
}

type TaskStore = CreateTaskRequestHandlerExtra["taskStore"];

/** Waits for the decision, then the core's resume gives the task's result. */
async function resumeWhenDecided(
  tool: ToolTarget,
  structured: boolean,
  request: ApprovalRequest,
  frame: Frame,
  store: TaskStore,
  taskId: string,
  controller: AbortController,
  pollMs: number,
): Promise<void> {
  if (!(await waitForDecision(tool, request, store, taskId, pollMs))) return;
  try {
    // Running now, no longer waiting for input: a task the client cancelled
    // meanwhile (terminal: the store refuses) is not resumed.
    await store.updateTaskStatus(taskId, "working");
  } catch {
    return;
  }
  const stopWatching = abortWhenCancelled(store, taskId, controller, pollMs);
  let result: CallToolResult;
  try {
    result = toResult(tool, await resumeAsCaller(tool, request.id, frame), structured);
  } catch (error) {
    result = failedResult(tool, error);
  } finally {
    stopWatching();
  }
  try {
    await store.storeTaskResult(taskId, taskStatus(result), result);
  } catch (error) {
    // Cancelled while it ran (or the store failed): the operator hears what became of the call.
    logAdapterFailure(tool.registry, tool.capabilityId, "the MCP task store (a finished call's result)", error);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** Whether the task is gone or cancelled (a store that cannot find it throws). */
async function taskEnded(store: TaskStore, taskId: string): Promise<boolean> {
  try {
    const task = await store.getTask(taskId);
    return task === null || task.status === "cancelled";
  } catch {
    return true;
  }
}

/**
 * Waits until the core no longer reads the request as pending (decided,
 * or expired as of the read); false when the task went away or was
 * cancelled meanwhile (the request then stays as it is). A failed read is
 * tried again at the next poll: the request's expiry bounds the wait.
 */
async function waitForDecision(
  tool: ToolTarget,
  request: ApprovalRequest,
  store: TaskStore,
  taskId: string,
  pollMs: number,
): Promise<boolean> {
  for (;;) {
    // Not before the next poll, nor much after the request can expire.
    const untilExpiry = request.expiresAt - Date.now() + 1;
    await sleep(Math.max(1, untilExpiry > 0 ? Math.min(pollMs, untilExpiry) : pollMs));
    let decided: boolean;
    try {
      decided = (await tool.registry.approvals.get(request.id))?.status !== "pending";
    } catch {
      // Unreadable: past its expiry the wait ends, and the resume says
      // what became of it (expired, or the store's INTERNAL), never a task
      // that waits on a store that is down until its ttl.
      decided = Date.now() > request.expiresAt;
    }
    // Checked after the read, so a cancel that came first always wins.
    if (await taskEnded(store, taskId)) return false;
    if (decided) return true;
  }
}

/** While the approved call runs, a cancelled task aborts it (its signal); the returned function stops watching. */
function abortWhenCancelled(store: TaskStore, taskId: string, controller: AbortController, pollMs: number) {
  let watching = true;
  void (async () => {
    while (watching) {
      await sleep(pollMs);
      if (watching && (await taskEnded(store, taskId))) controller.abort();
    }
  })();
  return () => {
    watching = false;
  };
}

/** The core's task status for a finished call's result (only what it reads: the output may have no JSON form). */
const taskStatus = (r: CallToolResult) =>
  N.mcpTaskStatus(`{"isError":${r.isError === true}}`) as "completed" | "failed";
