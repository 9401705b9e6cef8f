/**
 * The OpenAI Agents SDK adapter's tool set (`GovernedAgentTools`): one caller's
 * governed function tools, the gate `needsApproval` asks, the approved run and
 * the answers to run interruptions (documented in `openai-agents.ts`).
 */

import type * as AgentsCore from "@openai/agents-core";

import { frameFields } from "../call-crossing.js";
import { INTERNAL_MESSAGE } from "../errors.js";
import { N } from "../native.js";
import type { ApprovalRequest, Frame } from "../types.js";
import { approvalKey, callerRequired, sharedApprovalIds, type ApprovalIdStore } from "./approval-ids.js";
import type { OpenAiAgentsToolsOptions } from "./openai-agents.js";
import {
  argumentsOf,
  callIdOf,
  errorText,
  MESSAGES,
  OpenAiAgentsPrincipalRequiredError,
  outputText,
} from "./openai-agents-answers.js";
import { optionalPeer } from "./optional-peer.js";
import {
  CapabilityError,
  logAdapterFailure,
  resumeAsRequester,
  type AdapterFrame,
  type AdapterRegistry,
  type CapabilityDescriptor,
  type InvokeResult,
} from "./registry-port.js";

/** A run interruption, as the SDK gives it (`RunToolApprovalItem`). */
type ApprovalItem = AgentsCore.RunToolApprovalItem;
/** The part of `RunState` the adapter uses. */
interface ApprovingState {
  approve(item: ApprovalItem): void;
  reject(item: ApprovalItem, options?: { message?: string }): void;
}

/** A call's outcome computed by `needsApproval`, waiting for the SDK's call of the tool. */
type Settled = { ok: true; output: unknown } | { ok: false; error: unknown };

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
    frameFields("governedAgentTools", "frame", frame);
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
        this.#run(capabilityId, details?.toolCall?.callId, input).catch((error: unknown) => {
          logAdapterFailure(this.#registry, capabilityId, "the tool call", error);
          return errorText(undefined);
        }),
    }) as AgentsCore.FunctionTool;
  }

  /** `true` iff the core asks for approval of this call. */
  async #gate(name: string, capabilityId: string, input: unknown, callId: string | undefined): Promise<boolean> {
    // An outcome an earlier call under this id left unread (its run ended
    // before the tool was called) is not this call's.
    if (callId !== undefined) this.#settled.delete(callId);
    const key = this.#key(callId, capabilityId, input);
    const kept = key === undefined ? undefined : this.#ids.get(key);
    let outcome: InvokeResult;
    try {
      // Asked again about a call already presented: a resumed run with the
      // call undecided keeps its one request; one run or refused already
      // gets the core's answer for it (`agent_tools::kept_request`).
      const request = kept === undefined ? null : await this.#registry.approvals.get(kept);
      const step = N.agentToolKeptRequest(request?.status ?? null, request?.capabilityId === capabilityId);
      if (step === "holds") return true;
      outcome =
        request !== null && step === "decided"
          ? await this.#resume(request.id, callId, capabilityId)
          : await this.#registry.invoke(capabilityId, input, this.#modelFrame(callId));
    } catch (error) {
      if (callerRequired(error)) throw new OpenAiAgentsPrincipalRequiredError(name);
      logAdapterFailure(this.#registry, capabilityId, "the tool call", error);
      if (callId !== undefined) this.#settled.set(callId, { ok: false, error });
      return false;
    }
    if (outcome.status === "approval_required") {
      // The core stores requests on this surface only for a named caller,
      // so only a missing call id (or arguments with no JSON) gets here: fail closed.
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
      return settled.ok ? this.#outputText(capabilityId, settled.output) : errorText(settled.error);
    }
    const key = this.#key(callId, capabilityId, input);
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
      logAdapterFailure(this.#registry, capabilityId, "the tool call", error);
      return errorText(error);
    }
    if (outcome.status === "approval_required") {
      return N.agentToolApprovalRequiredText(outcome.request.id, outcome.request.reason ?? null);
    }
    return this.#outputText(capabilityId, outcome.output);
  }

  /** The output as the model reads it; one with no JSON form is INTERNAL, and the operator is told why. */
  #outputText(capabilityId: string, output: unknown): string {
    return outputText(output, (e) => logAdapterFailure(this.#registry, capabilityId, "the output's JSON form", e));
  }

  /** The frame of one model tool call: surface `aiSdk` always; the tool call id as request id when the app sets none. */
  #modelFrame(callId: string | undefined): Frame {
    return { ...this.#frame, surface: "aiSdk", requestId: this.#frame.requestId ?? callId };
  }

  /** Only this tool's request, made by this caller on this surface. */
  #resume(requestId: string, callId: string | undefined, capabilityId: string): Promise<InvokeResult> {
    return resumeAsRequester(this.#registry, requestId, this.#modelFrame(callId), capabilityId);
  }

  /** The core's request-id store key (`approvalKey`): this caller's, this call's (its tool and arguments). */
  #key(callId: string | undefined, capabilityId: string, input: unknown): string | undefined {
    return callId === undefined ? undefined : approvalKey(this.#frame, callId, capabilityId, input);
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
    const capabilityId = this.#capabilityByTool.get(item.name ?? "");
    const input = argumentsOf(item);
    if (capabilityId === undefined || input === undefined) return undefined;
    const key = this.#key(callIdOf(item), capabilityId, input.value);
    return key === undefined ? undefined : this.#ids.get(key);
  }

  /**
   * The core's request behind an interruption (show its input through
   * `registry.redactApprovalInput`); `null` when none, or when the id kept
   * under its call is another tool's request (a provider reusing call ids).
   */
  async request(item: ApprovalItem): Promise<ApprovalRequest | null> {
    const requestId = this.requestId(item);
    const request = requestId === undefined ? null : await this.#registry.approvals.get(requestId);
    return request?.capabilityId === this.#capabilityByTool.get(item.name ?? "") ? request : null;
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
    const decided = await this.#registry.approvals.approve(await this.#requiredId(item), decision);
    state.approve(item);
    return decided;
  }

  /** The core rejects the request, then the run state rejects the call with the core's answer as what the model reads. */
  async reject(
    state: ApprovingState,
    item: ApprovalItem,
    decision: { approver?: string; reason?: string } = {},
  ): Promise<ApprovalRequest> {
    const requestId = await this.#requiredId(item);
    const decided = await this.#registry.approvals.reject(requestId, decision);
    state.reject(item, { message: await this.#rejectionText(requestId, item) });
    return decided;
  }

  async #requiredId(item: ApprovalItem): Promise<string> {
    const request = await this.request(item);
    if (request === null) throw new CapabilityError("APPROVAL_NOT_FOUND", MESSAGES.unknownInterruption);
    return request.id;
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
