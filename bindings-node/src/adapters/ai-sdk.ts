/**
 * AI SDK adapter: governed capabilities as real `ai` tools.
 *
 * The approval decision is the core's. `ai` asks a tool `needsApproval(input)`
 * before it calls `execute`; this adapter answers by running the invocation
 * through the core pipeline (surface `aiSdk`) and looking at the outcome:
 *
 * - `approval_required` → `true`. The core has stored an approval request; the
 *   adapter remembers its id under the tool call id. `ai` ends the turn with a
 *   `tool-approval-request`.
 * - anything else (output or a `CapabilityError`) → `false`, and the settled
 *   outcome waits for `execute`, which returns it (or throws the error) —
 *   the pipeline ran exactly once. (So a call that needs no approval runs
 *   while `ai` asks, a moment before `execute`, and the calls of one step run
 *   one after another: `ai` asks about them in turn.)
 *
 * On the approved re-run `ai` re-asks `needsApproval` (it checks the call still
 * needs approval) and then calls `execute`. A call the history shows was
 * already presented for approval is answered `true` without running
 * anything (`false` would have `ai` 6 tell the model the tool "does not
 * require approval"); `execute` runs it only if this server holds a request
 * for it under the same actor and session, so a forged or foreign approval
 * response runs nothing and reads APPROVAL_NOT_FOUND. `execute` finds the stored
 * request id, records the approval in the core's store (the `ai` approval
 * response is the human's decision; `decideApprovals: false` leaves deciding
 * to another approval UI) and resumes the request with `ai`'s abort signal.
 * The core re-checks the grant (status, expiry, hash, single use). A denied
 * response never reaches a tool; `settleAiSdkApprovalResponses(tools,
 * messages)` rejects the matching core requests so approval queues stay
 * accurate (unsettled ones expire).
 *
 * Progress. A call that reports progress while `needsApproval` waits (a
 * streaming handler, or one that calls `progress(done, total)`) has passed
 * the gate: `needsApproval` answers `false` at its first report, and
 * `execute` returns an async iterable, which `ai` streams as preliminary
 * tool results: the core's view of the progress
 * (`agent_tools::preliminary_result`, never a value the handler yielded,
 * which is neither validated nor redacted), then the output. A call that
 * settles without reporting, a resumed call and a direct `execute` return
 * the output alone.
 *
 * `ai` 7 adds a call-level `toolApproval` option that takes precedence over
 * `needsApproval` (which it still honours): pass `toolApproval:
 * aiSdkToolApproval(tools)`, or delegate to it from your own function. It
 * consults the same gate. Without it, `execute` meets the gate itself and the
 * model gets an `APPROVAL_REQUIRED` tool error: nothing runs unapproved.
 */

import type * as Ai from "ai";
import type { ModelMessage, Tool, ToolSet } from "ai";

import type { Frame } from "../types.js";
import { optionalPeer } from "./optional-peer.js";
import { INTERNAL_MESSAGE } from "../errors.js";
import { N } from "../native.js";
import {
  CapabilityError,
  resumeAsRequester,
  type AdapterFrame,
  type AdapterRegistry,
  type CapabilityDescriptor,
  type InvokeResult,
} from "./registry-port.js";

/**
 * Where approval request ids wait between the approval turn and the approved
 * re-run, under a key made of the frame's actor id, session id and the tool
 * call id (so one user's history cannot reach another's request), as the
 * core forms it (`agent_tools::approval_key`). A frame with neither an actor
 * id nor a session id has no key: the core refuses its gated calls before
 * storing anything, and the approval turn fails
 * (`AiSdkPrincipalRequiredError`).
 */
export interface ApprovalIdStore {
  get(key: string): string | undefined;
  set(key: string, requestId: string): void;
  delete(key: string): void;
}

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

/** A tool call's governed outcome, settled (never a rejected promise in a map). */
type Settled = { ok: true; outcome: InvokeResult } | { ok: false; error: unknown };

interface ToolSetState {
  registry: AdapterRegistry;
  frame: Frame;
  options: AiSdkToolsOptions;
  approvalIds: ApprovalIdStore;
  /** Outcomes computed by `needsApproval`, waiting for `execute`. */
  settled: Map<string, Promise<Settled>>;
  /** Progress of calls `needsApproval` started, waiting for `execute`. */
  running: Map<string, Running>;
  /** `ai`'s abort signal per tool call, from `onInputAvailable` (`needsApproval` gets none). */
  abortSignals: Map<string, AbortSignal>;
  toolNames: Set<string>;
}

/**
 * A call's progress as reported so far: only the latest report is kept (a
 * preliminary result is a snapshot, so a stream that outruns `ai` costs no
 * memory), a count to tell a new one, and who waits for the next.
 */
interface Running {
  latest: { done: number; total?: number } | undefined;
  reports: number;
  /** The call passed the gate and streams: `execute` returns an async iterable. */
  streaming: boolean;
  wake: (() => void) | undefined;
}

const approvalIdsByRegistry = new WeakMap<AdapterRegistry, ApprovalIdStore>();
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
  const state: ToolSetState = {
    registry,
    frame: { ...frame, surface: "aiSdk" },
    options,
    approvalIds: options.approvalIds ?? sharedApprovalIds(registry),
    settled: new Map(),
    running: new Map(),
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
      const running = state.running.get(toolCallId);
      state.running.delete(toolCallId);
      const output = modelSafe(executeGoverned(state, name, input, toolCallId, abortSignal, messages));
      return running !== undefined && (running.streaming || running.reports > 0)
        ? preliminaryResults(running, output)
        : output;
    },
  });
}

/**
 * What `ai` streams for a call that reports progress: the core's
 * preliminary result for each new report, then the output (the last value
 * is the tool's result; an error is thrown from here).
 */
function preliminaryResults(running: Running, output: Promise<unknown>): AsyncGenerator<unknown> {
  // Watched from now, not from the first `next()`: an error the iterable's
  // consumer never asks for is not an unhandled rejection.
  const state = { finished: false };
  const finish = () => {
    state.finished = true;
    running.wake?.();
  };
  output.then(finish, finish);
  return streamPreliminary(running, output, state);
}

async function* streamPreliminary(
  running: Running,
  output: Promise<unknown>,
  state: { finished: boolean },
): AsyncGenerator<unknown> {
  let shown = 0;
  for (;;) {
    if (running.reports > shown && running.latest !== undefined) {
      shown = running.reports;
      yield JSON.parse(N.agentToolPreliminaryResult(running.latest.done, running.latest.total ?? null));
      continue;
    }
    if (state.finished) break;
    await new Promise<void>((resolve) => {
      running.wake = resolve;
    });
    running.wake = undefined;
  }
  yield await output;
}

/** The adapters' fixed texts, the core's (`orpc_agent_core::agent_tools`). */
const MESSAGES: { readonly unknownApproval: string; readonly outputNotJson: string } = JSON.parse(
  N.agentToolMessages(),
);

/**
 * What `execute` gives `ai`, which sends a tool's output to the model and a
 * thrown error's message as it is: the output's JSON form (what the model
 * is sent is what was checked here), and only the library's errors — a
 * `CapabilityError` (the core's, or one the app threw itself) or the
 * approval-required error. Anything else (an exception of application code
 * met on the way, a remote transport's failure) is INTERNAL, its text and
 * cause not passed on.
 */
async function modelSafe(result: Promise<unknown>): Promise<unknown> {
  let output: unknown;
  try {
    output = await result;
  } catch (error) {
    if (error instanceof CapabilityError || error instanceof AiSdkApprovalRequiredError) throw error;
    throw new CapabilityError("INTERNAL", INTERNAL_MESSAGE);
  }
  if (output === undefined || output === null || typeof output === "string" || typeof output === "boolean")
    return output;
  let text: string | undefined;
  try {
    text = JSON.stringify(output);
  } catch {
    // No JSON form (a throwing `toJSON` or getter, a BigInt, a cycle): its text is not shown.
    throw new CapabilityError("INTERNAL", MESSAGES.outputNotJson);
  }
  return text === undefined ? undefined : JSON.parse(text);
}

/** The approval request this server stored for this caller's tool call, if any. */
function heldRequestId(state: ToolSetState, toolCallId: string): string | undefined {
  const key = approvalKey(state, toolCallId);
  return key === undefined ? undefined : state.approvalIds.get(key);
}

/** `true` iff the core's gate asks for approval of this call. */
async function gateNeedsApproval(
  state: ToolSetState,
  name: string,
  input: unknown,
  toolCallId: string,
  messages: readonly ModelMessage[],
): Promise<boolean> {
  // The approved re-run. A call the history shows was presented for
  // approval still needs it: answering `false` would make `ai` 6 deny it
  // with "does not require approval", which tells the model to call again
  // without one. `execute` then runs only a request this server made for
  // this caller, and answers any other with APPROVAL_NOT_FOUND.
  if (presentedForApproval(messages, toolCallId)) return true;
  const abortSignal = state.abortSignals.get(toolCallId);
  state.abortSignals.delete(toolCallId);
  const running: Running = { latest: undefined, reports: 0, streaming: false, wake: undefined };
  let reported!: () => void;
  const firstReport = new Promise<"progress">((resolve) => {
    reported = () => resolve("progress");
  });
  const frame = frameFor(state, toolCallId, abortSignal);
  const appListener = frame.onProgress;
  frame.onProgress = (event) => {
    running.latest = event;
    running.reports++;
    running.wake?.();
    reported();
    appListener?.(event);
  };
  const pending = settle(state.registry.invoke(name, input, frame));
  state.settled.set(toolCallId, pending);
  state.running.set(toolCallId, running);
  // Progress comes only from a running handler: the call passed the gate.
  if ((await Promise.race([pending, firstReport])) === "progress") {
    running.streaming = true;
    return false;
  }
  const result = await pending;
  if (!result.ok && callerRequired(result.error)) {
    // The core refused before storing a request: this tool set's frame names
    // no caller. The application's to fix, so it is told, not the model.
    state.settled.delete(toolCallId);
    state.running.delete(toolCallId);
    throw new AiSdkPrincipalRequiredError(name);
  }
  if (result.ok && result.outcome.status === "approval_required") {
    state.settled.delete(toolCallId);
    state.running.delete(toolCallId);
    const key = approvalKey(state, toolCallId);
    // The core stores requests on this surface only for a named caller, so
    // a key exists unless `ai` gave no tool call id: fail closed.
    if (key === undefined) throw new CapabilityError("INTERNAL", INTERNAL_MESSAGE);
    state.approvalIds.set(key, result.outcome.request.id);
    return true;
  }
  return false;
}

async function executeGoverned(
  state: ToolSetState,
  name: string,
  input: unknown,
  toolCallId: string,
  abortSignal: AbortSignal | undefined,
  messages: readonly ModelMessage[] = [],
): Promise<unknown> {
  const precomputed = state.settled.get(toolCallId);
  if (precomputed !== undefined) {
    state.settled.delete(toolCallId);
    return unwrap(await precomputed);
  }
  const key = approvalKey(state, toolCallId);
  const requestId = heldRequestId(state, toolCallId);
  if (key !== undefined && requestId !== undefined) {
    state.approvalIds.delete(key);
    if (state.options.decideApprovals !== false) {
      await recordDecision(state, requestId, true);
    }
    // As over MCP: only this tool's request, made by this caller on this surface.
    const resumed = await resumeAsRequester(state.registry, requestId, frameFor(state, toolCallId, abortSignal), name);
    return unwrapOutcome(resumed);
  }
  if (presentedForApproval(messages, toolCallId)) {
    // An approval response for a request this server does not hold for this caller.
    throw new CapabilityError("APPROVAL_NOT_FOUND", MESSAGES.unknownApproval);
  }
  // Called without `needsApproval` first (a direct `execute`, or an `ai` that
  // does not ask): run the pipeline here; a gate that fires is an error the
  // model can read, since no approval UI was involved.
  return unwrapOutcome(await state.registry.invoke(name, input, frameFor(state, toolCallId, abortSignal)));
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
    if (presentedForApproval(messages, toolCall.toolCallId)) {
      // Only a request this server made for this caller counts.
      return heldRequestId(state, toolCall.toolCallId) !== undefined
        ? ("user-approval" as const)
        : { type: "denied" as const, reason: MESSAGES.unknownApproval };
    }
    const needs = await gateNeedsApproval(state, toolCall.toolName, toolCall.input, toolCall.toolCallId, messages);
    if (needs) return "user-approval" as const;
    // Reporting progress, it passed the core's policies and gate: it runs.
    if (state.running.get(toolCall.toolCallId)?.streaming === true) return "approved" as const;
    const settledOutcome = await state.settled.get(toolCall.toolCallId);
    if (settledOutcome && !settledOutcome.ok && settledOutcome.error instanceof CapabilityError) {
      // The core says which outcomes are a denial (`agent_tools::gate_denies`).
      if (N.agentToolGateDenies(settledOutcome.error.code)) {
        // `execute` never runs for a denied call: nothing waits for it.
        state.settled.delete(toolCall.toolCallId);
        state.running.delete(toolCall.toolCallId);
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
  const toolCallIdByApprovalId = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type === "tool-approval-request") toolCallIdByApprovalId.set(part.approvalId, part.toolCallId);
    }
  }
  const rejected: string[] = [];
  for (const part of last.content) {
    if (part.type !== "tool-approval-response" || part.approved) continue;
    const toolCallId = toolCallIdByApprovalId.get(part.approvalId);
    const key = toolCallId === undefined ? undefined : approvalKey(state, toolCallId);
    const requestId = key === undefined ? undefined : state.approvalIds.get(key);
    if (key === undefined || requestId === undefined) continue;
    state.approvalIds.delete(key);
    await recordDecision(state, requestId, false, part.reason);
    rejected.push(requestId);
  }
  return rejected;
}

async function recordDecision(
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

function frameFor(state: ToolSetState, toolCallId: string, abortSignal?: AbortSignal): Frame {
  const signals = [state.frame.signal, abortSignal].filter((s): s is AbortSignal => s !== undefined);
  const frame: Frame = { ...state.frame };
  if (frame.requestId === undefined) frame.requestId = toolCallId;
  if (signals.length === 1) frame.signal = signals[0];
  else if (signals.length > 1) frame.signal = AbortSignal.any(signals);
  return frame;
}

/** Whether `messages` show this tool call was already presented for approval. */
function presentedForApproval(messages: readonly ModelMessage[], toolCallId: string): boolean {
  return messages.some(
    (message) =>
      message.role === "assistant" &&
      typeof message.content !== "string" &&
      message.content.some((part) => part.type === "tool-approval-request" && part.toolCallId === toolCallId),
  );
}

/**
 * The approval-id store key, the core's (`agent_tools::approval_key`): the
 * caller's actor id and session id and the tool call id. `undefined` when
 * the frame names no caller: nothing is stored or looked up for it.
 */
function approvalKey(state: ToolSetState, toolCallId: string): string | undefined {
  const actorId = state.frame.actor?.id;
  const sessionId = state.frame.sessionId;
  return (
    N.agentToolApprovalKey(
      typeof actorId === "string" ? actorId : null,
      typeof sessionId === "string" ? sessionId : null,
      toolCallId,
    ) ?? undefined
  );
}

/** Whether `error` is the core's refusal of a gated call whose frame names no caller. */
export function callerRequired(error: unknown): boolean {
  return (
    error instanceof CapabilityError &&
    error.code === "CREDENTIAL_REQUIRED" &&
    typeof error.details === "object" &&
    error.details !== null &&
    (error.details as { callerRequired?: unknown }).callerRequired === true
  );
}

function settle(promise: Promise<InvokeResult>): Promise<Settled> {
  return promise.then(
    (outcome) => ({ ok: true as const, outcome }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function unwrap(result: Settled): unknown {
  if (!result.ok) throw result.error;
  return unwrapOutcome(result.outcome);
}

function unwrapOutcome(outcome: InvokeResult): unknown {
  if (outcome.status === "ok") return outcome.output;
  throw new AiSdkApprovalRequiredError(outcome.request.id, outcome.request.reason);
}

/**
 * Thrown by the approval gate (`needsApproval`, `aiSdkToolApproval`) when the
 * core refuses a gated call because the tool set names no caller: no actor
 * id and no session id in the frame given to `toAiSdkTools` (on surface
 * `aiSdk` an approval is kept for the caller who asked, and two anonymous
 * callers could not be told apart). The call does not run and no request
 * is stored. Pass the authenticated user as `frame.actor.id`, or the
 * conversation's `frame.sessionId`.
 */
export class AiSdkPrincipalRequiredError extends TypeError {
  readonly code = "PRINCIPAL_REQUIRED";
  constructor(readonly toolName: string) {
    super(
      `toAiSdkTools: "${toolName}" needs approval, but this tool set's frame has no actor id and no session id, ` +
        "so the approval could not be kept for this caller alone. Pass the authenticated user as frame.actor.id " +
        "(or the conversation as frame.sessionId) to toAiSdkTools. The call did not run.",
    );
    this.name = "AiSdkPrincipalRequiredError";
  }
}

/** Thrown by `execute` when the core asks for approval and no `ai` approval turn was involved. */
export class AiSdkApprovalRequiredError extends Error {
  readonly code = "APPROVAL_REQUIRED";
  constructor(
    readonly requestId: string,
    reason?: string,
  ) {
    super(N.agentToolApprovalRequiredText(requestId, reason ?? null));
    this.name = "AiSdkApprovalRequiredError";
  }
}

/**
 * The default in-process store of request ids: the most recent 10 000 keys
 * (as Python's). A key evicted makes a replayed call a new call, which the
 * core gates again; nothing grows without bound.
 */
class BoundedApprovalIds implements ApprovalIdStore {
  readonly #items = new Map<string, string>();
  constructor(readonly limit = 10_000) {}
  get(key: string): string | undefined {
    return this.#items.get(key);
  }
  set(key: string, requestId: string): void {
    this.#items.delete(key);
    this.#items.set(key, requestId);
    for (const oldest of this.#items.keys()) {
      if (this.#items.size <= this.limit) break;
      this.#items.delete(oldest);
    }
  }
  delete(key: string): void {
    this.#items.delete(key);
  }
}

/** One in-process store per registry, shared by every tool set built from it (and by the OpenAI Agents adapter). */
export function sharedApprovalIds(registry: AdapterRegistry): ApprovalIdStore {
  let store = approvalIdsByRegistry.get(registry);
  if (store === undefined) {
    store = new BoundedApprovalIds();
    approvalIdsByRegistry.set(registry, store);
  }
  return store;
}

function stateOf(tools: ToolSet): ToolSetState {
  const state = stateByToolSet.get(tools);
  if (state === undefined) throw new TypeError("Expected a tool set built by toAiSdkTools().");
  return state;
}
