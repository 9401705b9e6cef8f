/**
 * AI SDK adapter: governed capabilities as real `ai` tools.
 *
 * The approval decision is the core's. `ai` asks a tool `needsApproval(input)`
 * before it calls `execute`; this adapter answers by running the invocation
 * through the core pipeline (surface `aiSdk`) and looking at the outcome:
 *
 * - `approval_required` → `true`. The core has stored an approval request; the
 *   adapter remembers its id under the tool call (`approvalKey`: the caller,
 *   the call id, the tool and its arguments). `ai` ends the turn with a
 *   `tool-approval-request`.
 * - passed (no approval needed) → `false`, and the call waits before its
 *   handler for `execute` (`handler-hold.ts`): `ai` asks every call of a step
 *   but executes them only when the step may run tools (finish reason `stop`
 *   or `tool-calls`), so a call it drops never runs — it ends CANCELLED when
 *   another call comes under its id, at its deadline (TIMEOUT, never
 *   started) or when `ai` aborts. The pipeline runs once: the gate's
 *   invocation is the one `execute` continues.
 * - refused before the handler (a policy's denial, invalid input) → `false`,
 *   and `execute` throws that error.
 *
 * On the approved re-run `ai` re-asks `needsApproval` (it checks the call still
 * needs approval) and then calls `execute`. A call the history shows was
 * already presented for approval is answered `true` without running
 * anything (`false` would have `ai` 6 tell the model the tool "does not
 * require approval"); `execute` runs it only if this server holds a request
 * for it under the same key (caller, call id, tool, arguments), so a forged or foreign approval
 * response runs nothing and reads APPROVAL_NOT_FOUND. `execute` finds the stored
 * request id, records the approval in the core's store (the `ai` approval
 * response is the human's decision; `decideApprovals: false` leaves deciding
 * to another approval UI) and resumes the request with `ai`'s abort signal.
 * The core re-checks the grant (status, expiry, hash, single use). A denied
 * response never reaches a tool; `settleAiSdkApprovalResponses(tools,
 * messages)` rejects the matching core requests so approval queues stay
 * accurate (unsettled ones expire).
 *
 * Progress. A streaming capability (an oRPC event-iterator output or an
 * async generator handler) that passed the gate: `execute` returns an async
 * iterable, which `ai` streams as preliminary tool results: the core's view
 * of each progress report (`agent_tools::preliminary_result`, never a value
 * the handler yielded, which is neither validated nor redacted), then the
 * output. Any other call, a resumed call and a direct `execute` return the
 * output alone (a `progress(done, total)` report still reaches the frame's
 * `onProgress`).
 *
 * `ai` 7 adds a call-level `toolApproval` option that takes precedence over
 * `needsApproval` (which it still honours): pass `toolApproval:
 * aiSdkToolApproval(tools)`, or delegate to it from your own function. It
 * consults the same gate. Without it, `execute` meets the gate itself and the
 * model gets an `APPROVAL_REQUIRED` tool error: nothing runs unapproved.
 */

import type * as Ai from "ai";
import type { ModelMessage, Tool, ToolSet } from "ai";

import { optionalPeer } from "./optional-peer.js";
import { N } from "../native.js";
import { executeGoverned, gateNeedsApproval, heldRequestId, recordDenial, type ToolSetState } from "./ai-sdk-calls.js";
import { forgetUnread, takeGated } from "./ai-sdk-gated.js";
import { MESSAGES, modelSafe } from "./ai-sdk-answers.js";
import { callsAskedAbout, presentedForApproval } from "./ai-sdk-history.js";
import { preliminaryResults } from "./ai-sdk-progress.js";
import { approvalKey, sharedApprovalIds, type ApprovalIdStore } from "./approval-ids.js";
import { frameFields } from "../frame-crossing.js";
import {
  CapabilityError,
  logAdapterFailure,
  type AdapterFrame,
  type AdapterRegistry,
  type CapabilityDescriptor,
} from "./registry-port.js";

export interface AiSdkToolsOptions {
  /**
   * Record the `ai` approval response in the core's store before resuming
   * (default `true`). With `false` the request must be decided elsewhere
   * (e.g. a manager's queue); an undecided one fails with `APPROVAL_PENDING`.
   */
  decideApprovals?: boolean;
  /** Who approves (an id) when the adapter records the decision; default the frame's actor id. */
  approver?: string;
  /**
   * Request ids by tool call id. Default: one in-process store per registry
   * (the most recent 10 000 keys), shared by every tool set built from it
   * (apps build tools per request).
   * Apps that serve one conversation from several processes supply a shared
   * store.
   */
  approvalIds?: ApprovalIdStore;
}

const stateByToolSet = new WeakMap<ToolSet, ToolSetState>();

/**
 * The registry's capabilities exposed on surface `aiSdk` as `ai` tools keyed
 * by their AI SDK tool name. Contextual capabilities are left out (they are
 * presented only bound to a context); exposure itself is the core's answer.
 */
export function toAiSdkTools(
  registry: AdapterRegistry,
  frame: AdapterFrame = {},
  options: AiSdkToolsOptions = {},
): ToolSet {
  frameFields("toAiSdkTools", "frame", frame);
  const state: ToolSetState = {
    registry,
    frame: { ...frame, surface: "aiSdk" },
    options,
    approvalIds: options.approvalIds ?? sharedApprovalIds(registry),
    settled: new Map(),
    running: new Map(),
    held: new Map(),
    gatedCalls: new Map(),
    abortSignals: new Map(),
    toolNames: new Set(),
  };
  const ai = optionalPeer<typeof Ai>("ai", "toAiSdkTools");
  const tools: ToolSet = {};
  for (const descriptor of registry.descriptors({ surface: "aiSdk" })) {
    if (descriptor.discovery === "contextual") continue;
    tools[descriptor.toolNames.aiSdk] = governedTool(ai, state, descriptor);
    state.toolNames.add(descriptor.toolNames.aiSdk);
  }
  stateByToolSet.set(tools, state);
  return tools;
}

function governedTool(ai: typeof Ai, state: ToolSetState, descriptor: CapabilityDescriptor): Tool {
  const name = descriptor.toolNames.aiSdk;
  return ai.tool({
    description: descriptor.description,
    // No `validate`: the core validates at stage 4 with the procedure's own schema.
    inputSchema: ai.jsonSchema(descriptor.inputSchema),
    onInputAvailable: ({ toolCallId, abortSignal }) => {
      if (abortSignal !== undefined) state.abortSignals.set(toolCallId, abortSignal);
    },
    needsApproval: (input: unknown, { toolCallId, messages }: { toolCallId: string; messages: ModelMessage[] }) =>
      gateNeedsApproval(state, name, input, toolCallId, messages),
    execute: (input: unknown, { toolCallId, abortSignal, messages }) => {
      const gated = takeGated(state, toolCallId, name, input); // what the gate left for this very call
      gated?.hold?.release(true); // `ai` executes it: its handler runs now
      const output = modelSafe(
        executeGoverned(state, name, input, toolCallId, abortSignal, messages, gated?.settled),
        (what, e) => logAdapterFailure(state.registry, descriptor.id, what, e),
      );
      return gated?.running?.streaming === true ? preliminaryResults(gated.running, output) : output;
    },
  });
}

/**
 * For `ai` 7's call-level `toolApproval` option: the same core gate, as
 * `ai` 7's statuses (`"user-approval"` when the core asks for approval,
 * `{type: "denied", reason}` when the call ended in an outcome the core
 * calls a denial (`agent_tools::gate_denies`: a policy's refusal), else
 * `"approved"` — the core already ran its policies, and `execute` reports
 * any other error).
 */
export function aiSdkToolApproval(tools: ToolSet) {
  const state = stateOf(tools);
  return async ({
    toolCall,
    messages = [],
  }: {
    toolCall: { toolName: string; toolCallId: string; input: unknown };
    messages?: ModelMessage[];
  }) => {
    if (!state.toolNames.has(toolCall.toolName)) return undefined;
    if (presentedForApproval(state, messages, toolCall.toolCallId, toolCall.toolName, toolCall.input)) {
      forgetUnread(state, toolCall.toolCallId); // the gate, below, forgets for the other calls
      // Only a request this server made for this caller counts.
      return heldRequestId(state, toolCall.toolCallId, toolCall.toolName, toolCall.input) !== undefined
        ? ("user-approval" as const)
        : { type: "denied" as const, reason: MESSAGES.unknownApproval };
    }
    const needs = await gateNeedsApproval(state, toolCall.toolName, toolCall.input, toolCall.toolCallId, messages);
    if (needs) return "user-approval" as const;
    // Held before its handler, it passed the core's policies and gate: it runs when executed.
    if (state.held.has(toolCall.toolCallId)) return "approved" as const;
    const settledOutcome = await state.settled.get(toolCall.toolCallId);
    if (settledOutcome && !settledOutcome.ok && settledOutcome.error instanceof CapabilityError) {
      // The core says which outcomes are a denial (`agent_tools::gate_denies`).
      if (N.agentToolGateDenies(settledOutcome.error.code)) {
        // `execute` never runs for a denied call: nothing waits for it.
        forgetUnread(state, toolCall.toolCallId);
        return { type: "denied" as const, reason: settledOutcome.error.message };
      }
    }
    return "approved" as const;
  };
}

/**
 * Rejects, in the core's store, the requests whose `ai` approval the user
 * denied in the last tool message of `messages` (a denied call never reaches
 * a tool, so the adapter learns of it only here). Returns the rejected ids.
 */
export async function settleAiSdkApprovalResponses(tools: ToolSet, messages: ModelMessage[]): Promise<string[]> {
  const state = stateOf(tools);
  const last = messages.at(-1);
  if (last?.role !== "tool" || typeof last.content === "string") return [];
  const callByApprovalId = callsAskedAbout(messages);
  const rejected: string[] = [];
  for (const part of last.content) {
    if (part.type !== "tool-approval-response" || part.approved) continue;
    const call = callByApprovalId.get(part.approvalId);
    // Only a call of these tools, under the names `toAiSdkTools` gave them, has a request here.
    if (call === undefined || !state.toolNames.has(call.toolName)) continue;
    // The request kept for this call: its tool and its arguments, as the history shows them.
    const key = approvalKey(state.frame, call.toolCallId, call.toolName, call.input);
    const requestId = key === undefined ? undefined : state.approvalIds.get(key);
    if (key === undefined || requestId === undefined) continue;
    const recorded = await recordDenial(state, requestId, part.reason);
    state.approvalIds.delete(key); // only once settled: a failure leaves it to settle again
    if (recorded) rejected.push(requestId);
  }
  return rejected;
}

function stateOf(tools: ToolSet): ToolSetState {
  const state = stateByToolSet.get(tools);
  if (state === undefined) throw new TypeError("Expected a tool set built by toAiSdkTools().");
  return state;
}
