/**
 * What an `ai` conversation's history shows about a tool call of these
 * tools: whether it was already put to a person for approval, and which
 * call each approval request asked about. Apart from `ai-sdk-calls.ts` and
 * `ai-sdk.ts` (the gate, `execute`, the approval responses), which ask it.
 */

import type { ModelMessage } from "ai";

import { approvalKey } from "./approval-ids.js";
import type { ToolSetState } from "./ai-sdk-calls.js";

/**
 * Whether `messages` show this call was already presented for approval: an
 * assistant message asked a person about this tool call id (not `ai` 7's
 * automatic record of a call it let through), and the call beside it there
 * is this tool with these arguments (the store key, the core's hash; a
 * tool the app lists under another name is matched by its arguments). A provider that
 * reused the id for another call has not been: that call is gated afresh.
 * Without the call beside it, or a caller to key it by, the id alone
 * answers.
 */
export function presentedForApproval(
  state: ToolSetState,
  messages: readonly ModelMessage[],
  toolCallId: string,
  name: string,
  input: unknown,
): boolean {
  const key = approvalKey(state.frame, toolCallId, name, input);
  return messages.some((message) => {
    if (message.role !== "assistant" || typeof message.content === "string") return false;
    const parts = message.content;
    const asked = parts.some(
      (part) =>
        part.type === "tool-approval-request" &&
        part.toolCallId === toolCallId &&
        (part as { isAutomatic?: unknown }).isAutomatic !== true,
    );
    if (!asked) return false;
    const call = parts.find((part) => part.type === "tool-call" && part.toolCallId === toolCallId);
    if (call === undefined || call.type !== "tool-call" || key === undefined) return true;
    // Another of these tools under the id is another call; a name these
    // tools do not have is this tool under the app's name for it.
    if (call.toolName !== name && state.toolNames.has(call.toolName)) return false;
    return approvalKey(state.frame, toolCallId, name, call.input) === key;
  });
}

/** A tool call as the history holds it. */
export interface HistoryCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/**
 * Each approval id of `messages` → the call it asked about: the one beside
 * its request (the same assistant message), else the last call under its id.
 */
export function callsAskedAbout(messages: readonly ModelMessage[]): Map<string, HistoryCall> {
  const lastCallById = new Map<string, HistoryCall>();
  const callByApprovalId = new Map<string, HistoryCall>();
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) if (part.type === "tool-call") lastCallById.set(part.toolCallId, part);
    for (const part of message.content) {
      if (part.type !== "tool-approval-request") continue;
      const beside = message.content.find((p) => p.type === "tool-call" && p.toolCallId === part.toolCallId);
      const call = beside?.type === "tool-call" ? beside : lastCallById.get(part.toolCallId);
      if (call !== undefined) callByApprovalId.set(part.approvalId, call);
    }
  }
  return callByApprovalId;
}
