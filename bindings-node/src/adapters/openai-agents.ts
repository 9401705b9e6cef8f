/**
 * OpenAI Agents SDK adapter (`@openai/agents`, through its core package
 * `@openai/agents-core`): governed capabilities as the SDK's function tools,
 * approvals as the SDK's run interruptions — as Python's
 * `orpc_agent.openai_agents`.
 *
 * `governedAgentTools(registry, frame)` lists every capability the core
 * exposes on surface `aiSdk` (the model-driven surface; contextual ones left
 * out) as a function tool: the name is the descriptor's `toolNames.aiSdk`,
 * the parameters its input JSON Schema, not strict (the SDK validates
 * nothing more: the core validates at stage 4).
 *
 * The approval decision is the core's, asked through one invocation (as in
 * the AI SDK adapter). The SDK asks a tool's `needsApproval` before it runs
 * it; the adapter answers by running the governed call:
 *
 * - `approval_required` → `true`: the core stored a request, its id is kept
 *   under the caller and the tool call id, and the run ends with an
 *   interruption (`result.interruptions`);
 * - anything else → `false`: the settled outcome (the output, or the core's
 *   error text) is what the tool returns when the SDK calls it — the
 *   pipeline ran once.
 *
 * Answer an interruption with `await governed.approve(state, item,
 * {approver})` (the core's approve, then `state.approve`) or `await
 * governed.reject(state, item, {approver})` (the core's reject, then
 * `state.reject` with the core's text for the model), then run the state
 * again; `state.toString()` / `RunState.fromString` in between are fine. The
 * approved call resumes the core's request once (only this tool's request,
 * made on `aiSdk` by this caller); a replay is refused by the core
 * (`APPROVAL_CONSUMED`). A plain `state.approve(item)` works too: the adapter
 * records it as the core's decision (approver: the `approver` option, else
 * the frame's actor id) unless `decideApprovals: false`. A plain
 * `state.reject(item)` never reaches a tool: the core's request stays pending
 * until it expires.
 *
 * What the model reads of a call without an output is the core's text
 * (`CODE: message` and the code's hint); anything thrown that is not a
 * `CapabilityError` is `INTERNAL` with a fixed text.
 */

import type * as AgentsCore from "@openai/agents-core";

import { INTERNAL_MESSAGE } from "../errors.js";
import { N } from "../native.js";
import type { ApprovalRequest, Frame } from "../types.js";
import { callerRequired, sharedApprovalIds, type ApprovalIdStore } from "./ai-sdk.js";
import { optionalPeer } from "./optional-peer.js";
import {
  CapabilityError,
  mcpErrorResult,
  resumeAsRequester,
  type AdapterFrame,
  type AdapterRegistry,
  type CapabilityDescriptor,
  type InvokeResult,
} from "./registry-port.js";

export interface OpenAiAgentsToolsOptions {
  /** Who approves (an id) when the adapter records the SDK's approval; default the frame's actor id. */
  approver?: string;
  /**
   * Record a plain `state.approve(item)` as the core's decision when the
   * approved call runs (default `true`). With `false` the request must be
   * decided elsewhere; an undecided one reads `APPROVAL_PENDING`.
   */
  decideApprovals?: boolean;
  /**
   * Where request ids wait between the interruption and the approved run
   * (default: in process, per registry, shared with the AI SDK adapter).
   * Pass a shared store when another process resumes the run.
   */
  approvalIds?: ApprovalIdStore;
}

/** A run interruption, as the SDK gives it (`RunToolApprovalItem`). */
type ApprovalItem = AgentsCore.RunToolApprovalItem;
/** The part of `RunState` the adapter uses. */
interface ApprovingState {
  approve(item: ApprovalItem): void;
  reject(item: ApprovalItem, options?: { message?: string }): void;
}

/** A call's outcome computed by `needsApproval`, waiting for the SDK's call of the tool. */
type Settled = { ok: true; output: unknown } | { ok: false; error: unknown };

const MESSAGES: { readonly outputNotJson: string; readonly unknownInterruption: string } = JSON.parse(
  N.agentToolMessages(),
);

/**
 * Thrown by `needsApproval` when the core refuses a gated call because the
 * frame names no caller (no actor id, no session id): an approval is kept
 * for the caller who asked, and two anonymous callers could not be told
 * apart. Nothing ran and no request is stored. The SDK ends the run with it.
 */
export class OpenAiAgentsPrincipalRequiredError extends TypeError {
  readonly code = "PRINCIPAL_REQUIRED";
  constructor(readonly toolName: string) {
    super(
      `governedAgentTools: "${toolName}" needs approval, but the frame has no actor id and no session id, ` +
        "so the approval could not be kept for this caller alone. Pass the authenticated user as frame.actor.id " +
        "(or the conversation as frame.sessionId). The call did not run.",
    );
    this.name = "OpenAiAgentsPrincipalRequiredError";
  }
}

/** The governed tools of one caller (`tools`: pass them as `new Agent({tools})`), and the answers to their interruptions. */
export class GovernedAgentTools {
  readonly tools: AgentsCore.FunctionTool[] = [];
  readonly #registry: AdapterRegistry;
  readonly #frame: AdapterFrame;
  readonly #options: OpenAiAgentsToolsOptions;
  readonly #ids: ApprovalIdStore;
  readonly #settled = new Map<string, Settled>();
  readonly #capabilityByTool = new Map<string, string>();

  constructor(registry: AdapterRegistry, frame: AdapterFrame = {}, options: OpenAiAgentsToolsOptions = {}) {
    const agents = optionalPeer<typeof AgentsCore>("@openai/agents-core", "governedAgentTools");
    this.#registry = registry;
    this.#frame = frame;
    this.#options = options;
    this.#ids = options.approvalIds ?? sharedApprovalIds(registry);
    for (const descriptor of registry.descriptors({ surface: "aiSdk" })) {
      if (descriptor.discovery === "contextual") continue;
      this.tools.push(this.#tool(agents, descriptor));
    }
  }

  #tool(agents: typeof AgentsCore, descriptor: CapabilityDescriptor): AgentsCore.FunctionTool {
    const name = descriptor.toolNames.aiSdk;
    const capabilityId = descriptor.id;
    this.#capabilityByTool.set(name, capabilityId);
    return agents.tool({
      name,
      description: descriptor.description,
      parameters: { properties: {}, ...descriptor.inputSchema } as never,
      strict: false,
      needsApproval: (_context: unknown, input: unknown, callId?: string) =>
        this.#gate(name, capabilityId, input, callId),
      // Nothing but text leaves: the SDK would show a thrown error's text or end the run.
      execute: (input: unknown, _context: unknown, details?: { toolCall?: { callId?: string } }) =>
        this.#run(capabilityId, details?.toolCall?.callId, input).catch(() => errorText(undefined)),
    }) as AgentsCore.FunctionTool;
  }

  /** `true` iff the core asks for approval of this call. */
  async #gate(name: string, capabilityId: string, input: unknown, callId: string | undefined): Promise<boolean> {
    const key = this.#key(callId);
    const kept = key === undefined ? undefined : this.#ids.get(key);
    if (kept !== undefined) {
      // Asked again about a call already presented (a resumed run with the
      // call still undecided): the same request, not a second one.
      const request = await this.#registry.approvals.get(kept);
      if (request !== null && N.agentToolKeptRequestHoldsTheCall(request.status)) return true;
    }
    let outcome: InvokeResult;
    try {
      outcome = await this.#registry.invoke(capabilityId, input, this.#modelFrame(callId));
    } catch (error) {
      if (callerRequired(error)) throw new OpenAiAgentsPrincipalRequiredError(name);
      if (callId !== undefined) this.#settled.set(callId, { ok: false, error });
      return false;
    }
    if (outcome.status === "approval_required") {
      // The core stores requests on this surface only for a named caller,
      // so only a missing call id gets here: fail closed.
      if (key === undefined) throw new CapabilityError("INTERNAL", INTERNAL_MESSAGE);
      this.#ids.set(key, outcome.request.id);
      return true;
    }
    if (callId !== undefined) this.#settled.set(callId, { ok: true, output: outcome.output });
    return false;
  }

  async #run(capabilityId: string, callId: string | undefined, input: unknown): Promise<string> {
    const settled = callId === undefined ? undefined : this.#settled.get(callId);
    if (callId !== undefined && settled !== undefined) {
      this.#settled.delete(callId);
      return settled.ok ? outputText(settled.output) : errorText(settled.error);
    }
    const key = this.#key(callId);
    const requestId = key === undefined ? undefined : this.#ids.get(key);
    let outcome: InvokeResult;
    try {
      if (requestId !== undefined) {
        // The approved call: the core's request, resumed once.
        if (this.#options.decideApprovals !== false) await this.#recordApproval(requestId);
        outcome = await this.#resume(requestId, callId, capabilityId);
      } else {
        // Called without the gate first: run here.
        outcome = await this.#registry.invoke(capabilityId, input, this.#modelFrame(callId));
      }
    } catch (error) {
      return errorText(error);
    }
    if (outcome.status === "approval_required") {
      return N.agentToolApprovalRequiredText(outcome.request.id, outcome.request.reason ?? null);
    }
    return outputText(outcome.output);
  }

  /** The frame of one model tool call: surface `aiSdk` always; the tool call id as request id when the app sets none. */
  #modelFrame(callId: string | undefined): Frame {
    return { ...this.#frame, surface: "aiSdk", requestId: this.#frame.requestId ?? callId };
  }

  /** Only this tool's request, made by this caller on this surface. */
  #resume(requestId: string, callId: string | undefined, capabilityId: string): Promise<InvokeResult> {
    return resumeAsRequester(this.#registry, requestId, this.#modelFrame(callId), capabilityId);
  }

  /** The core's request-id store key (`agent_tools::approval_key`); none when the frame names no caller. */
  #key(callId: string | undefined): string | undefined {
    const actorId = this.#frame.actor?.id;
    const sessionId = this.#frame.sessionId;
    return (
      N.agentToolApprovalKey(
        typeof actorId === "string" ? actorId : null,
        typeof sessionId === "string" ? sessionId : null,
        callId ?? "",
      ) ?? undefined
    );
  }

  /** The SDK's approval as the core's decision. Already decided: the resume that follows reports the core's view. */
  async #recordApproval(requestId: string): Promise<void> {
    const approver = N.agentToolRecordedApprover(this.#options.approver, this.#frame.actor?.id) ?? undefined;
    try {
      await this.#registry.approvals.approve(requestId, approver === undefined ? {} : { approver });
    } catch (error) {
      if (!(error instanceof CapabilityError)) throw error;
    }
  }

  // -- the interruptions -----------------------------------------------------

  /** The core's request id behind an interruption of these tools, if this tool set keeps one for its caller. */
  requestId(item: ApprovalItem): string | undefined {
    if (item.name === undefined || !this.#capabilityByTool.has(item.name)) return undefined;
    const key = this.#key(callIdOf(item));
    return key === undefined ? undefined : this.#ids.get(key);
  }

  /** The core's request behind an interruption (show its input through `registry.redactApprovalInput`). */
  async request(item: ApprovalItem): Promise<ApprovalRequest | null> {
    const requestId = this.requestId(item);
    return requestId === undefined ? null : this.#registry.approvals.get(requestId);
  }

  /**
   * The core approves the request (`approverMustDiffer` and the rest are the
   * core's; a refusal throws and the state is unchanged), then the run state
   * approves the call. Run the state again to run it.
   */
  async approve(
    state: ApprovingState,
    item: ApprovalItem,
    decision: { approver?: string; reason?: string } = {},
  ): Promise<ApprovalRequest> {
    const decided = await this.#registry.approvals.approve(this.#requiredId(item), decision);
    state.approve(item);
    return decided;
  }

  /** The core rejects the request, then the run state rejects the call with the core's answer as what the model reads. */
  async reject(
    state: ApprovingState,
    item: ApprovalItem,
    decision: { approver?: string; reason?: string } = {},
  ): Promise<ApprovalRequest> {
    const requestId = this.#requiredId(item);
    const decided = await this.#registry.approvals.reject(requestId, decision);
    state.reject(item, { message: await this.#rejectionText(requestId, item) });
    return decided;
  }

  #requiredId(item: ApprovalItem): string {
    const requestId = this.requestId(item);
    if (requestId === undefined) {
      throw new CapabilityError("APPROVAL_NOT_FOUND", MESSAGES.unknownInterruption);
    }
    return requestId;
  }

  /** What the model reads of a rejected call: the core's answer to running it now (refused, audited, nothing consumed). */
  async #rejectionText(requestId: string, item: ApprovalItem): Promise<string> {
    const capabilityId = this.#capabilityByTool.get(item.name ?? "") ?? "";
    try {
      await this.#resume(requestId, callIdOf(item), capabilityId);
    } catch (error) {
      return errorText(error);
    }
    // Unreachable: a rejected request is never consumed. Fail closed.
    return errorText(undefined);
  }
}

/** The registry's capabilities exposed on `aiSdk`, as OpenAI Agents SDK function tools for one caller. */
export function governedAgentTools(
  registry: AdapterRegistry,
  frame: AdapterFrame = {},
  options: OpenAiAgentsToolsOptions = {},
): GovernedAgentTools {
  return new GovernedAgentTools(registry, frame, options);
}

function callIdOf(item: ApprovalItem): string | undefined {
  const callId = (item.rawItem as { callId?: unknown }).callId;
  return typeof callId === "string" ? callId : undefined;
}

/** The core's text for a call that failed; anything not a `CapabilityError` is INTERNAL. */
function errorText(error: unknown): string {
  const text = mcpErrorResult(error).content[0];
  return text !== undefined && text.type === "text" ? text.text : INTERNAL_MESSAGE;
}

/** The output as the model reads it: a string as it is, anything else its JSON text. */
function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  try {
    return JSON.stringify(output) ?? "null";
  } catch {
    // No JSON form (a throwing `toJSON`, a BigInt, a cycle): its text is not shown.
    return errorText(new CapabilityError("INTERNAL", MESSAGES.outputNotJson));
  }
}
