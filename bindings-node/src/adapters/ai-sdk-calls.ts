/**
 * One governed AI SDK tool call: a tool set's state, the core's gate that
 * `needsApproval` asks (`gateNeedsApproval`), what `execute` runs
 * (`executeGoverned`: the settled outcome, the approved request's resume,
 * or the pipeline) and the decisions the adapter records (the key is
 * `approval-ids.ts`'s, what the history shows `ai-sdk-history.ts`'s). Apart from `ai-sdk.ts`, which builds the tools and answers the
 * call-level approval APIs from these.
 */

import type { ModelMessage } from "ai";

import type { Frame } from "../types.js";
import { INTERNAL_MESSAGE } from "../errors.js";
import { LONE_SURROGATE } from "../json.js";
import { N } from "../native.js";
import { invokeToHandler, type HandlerHold, type Settled } from "../handler-hold.js";
import type { AiSdkToolsOptions } from "./ai-sdk.js";
import { AiSdkApprovalRequiredError, AiSdkPrincipalRequiredError, MESSAGES } from "./ai-sdk-answers.js";
import type { Running } from "./ai-sdk-progress.js";
import { approvalKey, callerRequired, type ApprovalIdStore } from "./approval-ids.js";
import { presentedForApproval } from "./ai-sdk-history.js";
import { callIdentity, forgetUnread } from "./ai-sdk-gated.js";
import {
  CapabilityError,
  logAdapterFailure,
  resumeAsRequester,
  type AdapterRegistry,
  type InvokeResult,
} from "./registry-port.js";

export interface ToolSetState {
  registry: AdapterRegistry;
  frame: Frame;
  options: AiSdkToolsOptions;
  approvalIds: ApprovalIdStore;
  /** Outcomes computed by `needsApproval`, waiting for `execute`. */
  settled: Map<string, Promise<Settled>>;
  /** Progress of calls `needsApproval` started, waiting for `execute`. */
  running: Map<string, Running>;
  /** Calls that passed the gate, held before their handler until `execute`. */
  held: Map<string, HandlerHold>;
  /**
   * Which call the entries under a tool call id are (its tool and
   * arguments): a provider may give two calls of one step the same id, and
   * `execute` of one must never take the other's outcome or release its hold.
   */
  gatedCalls: Map<string, string | undefined>;
  /** `ai`'s abort signal per tool call, from `onInputAvailable` (`needsApproval` gets none). */
  abortSignals: Map<string, AbortSignal>;
  toolNames: Set<string>;
}

/** The approval request this server stored for this caller's tool call (this tool, these arguments), if any. */
export function heldRequestId(
  state: ToolSetState,
  toolCallId: string,
  name: string,
  input: unknown,
): string | undefined {
  const key = approvalKey(state.frame, toolCallId, name, input);
  return key === undefined ? undefined : state.approvalIds.get(key);
}

/** `true` iff the core's gate asks for approval of this call. */
export async function gateNeedsApproval(
  state: ToolSetState,
  name: string,
  input: unknown,
  toolCallId: string,
  messages: readonly ModelMessage[],
): Promise<boolean> {
  forgetUnread(state, toolCallId);
  // The approved re-run. A call the history shows was presented for
  // approval still needs it: answering `false` would make `ai` 6 deny it
  // with "does not require approval", which tells the model to call again
  // without one. `execute` then runs only a request this server made for
  // this caller, and answers any other with APPROVAL_NOT_FOUND.
  if (presentedForApproval(state, messages, toolCallId, name, input)) return true;
  const abortSignal = state.abortSignals.get(toolCallId);
  state.abortSignals.delete(toolCallId);
  const running: Running = { latest: undefined, reports: 0, streaming: false, wake: undefined };
  const frame = frameFor(state, toolCallId, abortSignal);
  const appListener = frame.onProgress;
  frame.onProgress = (event) => {
    running.latest = event;
    running.reports++;
    running.wake?.();
    appListener?.(event);
  };
  // The gate only: a call that passes it waits before its handler for
  // `execute`, which `ai` calls only when the step may run tools.
  const gated = await invokeToHandler((f) => state.registry.invoke(name, input, f), frame);
  const pending = gated.settled;
  state.gatedCalls.set(toolCallId, callIdentity(name, input));
  state.settled.set(toolCallId, pending);
  state.running.set(toolCallId, running);
  if (gated.hold !== undefined) {
    state.held.set(toolCallId, gated.hold);
    running.streaming = gated.hold.streams;
    return false;
  }
  const result = await pending;
  if (!result.ok && callerRequired(result.error)) {
    // The core refused before storing a request: this tool set's frame names
    // no caller. The application's to fix, so it is told, not the model.
    forgetUnread(state, toolCallId);
    throw new AiSdkPrincipalRequiredError(name);
  }
  if (result.ok && result.outcome.status === "approval_required") {
    forgetUnread(state, toolCallId);
    const key = approvalKey(state.frame, toolCallId, name, input);
    // The core stores requests on this surface only for a named caller, so
    // a key exists unless `ai` gave no tool call id (or arguments with no JSON): fail closed.
    if (key === undefined) throw new CapabilityError("INTERNAL", INTERNAL_MESSAGE);
    state.approvalIds.set(key, result.outcome.request.id);
    return true;
  }
  return false;
}

export async function executeGoverned(
  state: ToolSetState,
  name: string,
  input: unknown,
  toolCallId: string,
  abortSignal: AbortSignal | undefined,
  messages: readonly ModelMessage[] = [],
  precomputed: Promise<Settled> | undefined = undefined,
): Promise<unknown> {
  if (precomputed !== undefined) return unwrap(await precomputed);
  const key = approvalKey(state.frame, toolCallId, name, input);
  const requestId = key === undefined ? undefined : state.approvalIds.get(key);
  if (key !== undefined && requestId !== undefined) {
    let ended: string | null = null; // the resume's error code; null: ok
    try {
      if (state.options.decideApprovals !== false) {
        await recordDecision(state, requestId, true);
      }
      // As over MCP: only this tool's request, made by this caller on this surface.
      const frame = frameFor(state, toolCallId, abortSignal);
      return unwrapOutcome(await resumeAsRequester(state.registry, requestId, frame, name));
    } catch (error) {
      ended = error instanceof CapabilityError ? error.code : "INTERNAL";
      throw error;
    } finally {
      forgetUnlessRunnable(state, key, ended, name);
    }
  }
  if (presentedForApproval(state, messages, toolCallId, name, input)) {
    // An approval response for a request this server does not hold for this caller.
    throw new CapabilityError("APPROVAL_NOT_FOUND", MESSAGES.unknownApproval);
  }
  // Called without `needsApproval` first (a direct `execute`, or an `ai` that
  // does not ask): run the pipeline here; a gate that fires is an error the
  // model can read, since no approval UI was involved.
  return unwrapOutcome(await state.registry.invoke(name, input, frameFor(state, toolCallId, abortSignal)));
}

/**
 * Forgets the request id of a resumed call unless its request may still
 * run (`agent_tools::resume_may_run_again`: the resume ended before the
 * consume — still pending, cancelled, a store's failure), so an app's own
 * store does not grow and an undecided request is resumed when the
 * approval is answered again. A store that fails to forget is the
 * operator's to hear; the call's result stands.
 */
function forgetUnlessRunnable(state: ToolSetState, key: string, ended: string | null, name: string): void {
  try {
    if (!N.agentToolResumeMayRunAgain(ended)) state.approvalIds.delete(key);
  } catch (error) {
    logAdapterFailure(state.registry, name, "the approval-id store", error);
  }
}

export async function recordDecision(
  state: ToolSetState,
  requestId: string,
  approved: boolean,
  reason?: string,
): Promise<void> {
  const approver = N.agentToolRecordedApprover(state.options.approver, state.frame.actor?.id) ?? undefined;
  const decision = { ...(approver === undefined ? {} : { approver }), ...(reason === undefined ? {} : { reason }) };
  if (approved) {
    // Already decided elsewhere: the resume that follows reports the core's view.
    try {
      await state.registry.approvals.approve(requestId, decision);
    } catch (error) {
      if (!(error instanceof CapabilityError)) throw error;
    }
  } else {
    await state.registry.approvals.reject(requestId, decision);
  }
}

/**
 * A person's denial, with their reason when the core takes it; whether it
 * was recorded. A reason the core refuses (longer than a decision may
 * carry, no text) is left out rather than lose the denial: free text from a
 * chat UI is not the caller's to fix. A request the core will not reject
 * (decided elsewhere, expired, gone) is settled as it stands: its resume
 * reports what became of it, as after an approval decided elsewhere.
 */
export async function recordDenial(state: ToolSetState, requestId: string, reason: unknown): Promise<boolean> {
  const text = typeof reason === "string" && !LONE_SURROGATE.test(reason) ? reason : undefined;
  try {
    try {
      await recordDecision(state, requestId, false, text);
    } catch (error) {
      if (text === undefined || !(error instanceof CapabilityError) || error.code !== "INVALID_INPUT") throw error;
      await recordDecision(state, requestId, false);
    }
    return true;
  } catch (error) {
    // Decided elsewhere, expired or gone (the core's list of refusals that
    // mean the request's fate is settled: `mcp::refused_decision_resumes`
    // read for any decision): settled as it stands. Anything else (a store
    // down, `approverMustDiffer` refusing this approver) is the app's to see.
    if (error instanceof CapabilityError && N.mcpRefusedDecisionResumes(error.code, true)) return false;
    throw error;
  }
}

function frameFor(state: ToolSetState, toolCallId: string, abortSignal?: AbortSignal): Frame {
  const signals = [state.frame.signal, abortSignal].filter((s): s is AbortSignal => s !== undefined);
  const frame: Frame = { ...state.frame };
  if (frame.requestId === undefined) frame.requestId = toolCallId;
  if (signals.length === 1) frame.signal = signals[0];
  else if (signals.length > 1) frame.signal = AbortSignal.any(signals);
  return frame;
}

function unwrap(result: Settled): unknown {
  if (!result.ok) throw result.error;
  return unwrapOutcome(result.outcome);
}

function unwrapOutcome(outcome: InvokeResult): unknown {
  if (outcome.status === "ok") return outcome.output;
  throw new AiSdkApprovalRequiredError(outcome.request.id, outcome.request.reason);
}
