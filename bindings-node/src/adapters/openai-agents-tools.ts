/**
 * The OpenAI Agents SDK adapter's tool set (`GovernedAgentTools`): one caller's
 * governed function tools (their calls are `openai-agents-calls.ts`'s) and
 * the answers to run interruptions (documented in `openai-agents.ts`).
 */

import type * as AgentsCore from "@openai/agents-core";

import { frameFields } from "../frame-crossing.js";
import type { ApprovalRequest } from "../types.js";
import { sharedApprovalIds } from "./approval-ids.js";
import type { OpenAiAgentsToolsOptions } from "./openai-agents.js";
import { AgentToolCalls } from "./openai-agents-calls.js";
import { argumentsOf, callIdOf, errorText, MESSAGES } from "./openai-agents-answers.js";
import { optionalPeer } from "./optional-peer.js";
import {
  CapabilityError,
  logAdapterFailure,
  type AdapterFrame,
  type AdapterRegistry,
  type CapabilityDescriptor,
} from "./registry-port.js";

/** A run interruption, as the SDK gives it (`RunToolApprovalItem`). */
type ApprovalItem = AgentsCore.RunToolApprovalItem;
/** The part of `RunState` the adapter uses. */
interface ApprovingState {
  approve(item: ApprovalItem): void;
  reject(item: ApprovalItem, options?: { message?: string }): void;
}

/** The governed tools of one caller (`tools`: pass them as `new Agent({tools})`), and the answers to their interruptions. */
export class GovernedAgentTools {
  readonly tools: AgentsCore.FunctionTool[] = [];
  readonly #registry: AdapterRegistry;
  readonly #calls: AgentToolCalls;
  readonly #capabilityByTool = new Map<string, string>();

  constructor(registry: AdapterRegistry, frame: AdapterFrame = {}, options: OpenAiAgentsToolsOptions = {}) {
    frameFields("governedAgentTools", "frame", frame);
    const agents = optionalPeer<typeof AgentsCore>("@openai/agents-core", "governedAgentTools");
    this.#registry = registry;
    this.#calls = new AgentToolCalls(registry, frame, options, options.approvalIds ?? sharedApprovalIds(registry));
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
        this.#calls.gate(name, capabilityId, input, callId),
      // Nothing but text leaves: the SDK would show a thrown error's text or end the run.
      execute: (input: unknown, _context: unknown, details?: { toolCall?: { callId?: string } }) =>
        this.#calls.run(capabilityId, details?.toolCall?.callId, input).catch((error: unknown) => {
          logAdapterFailure(this.#registry, capabilityId, "the tool call", error);
          return errorText(undefined);
        }),
    }) as AgentsCore.FunctionTool;
  }

  // -- the interruptions -----------------------------------------------------

  /** The core's request id behind an interruption of these tools, if this tool set keeps one for its caller. */
  requestId(item: ApprovalItem): string | undefined {
    const capabilityId = this.#capabilityByTool.get(item.name ?? "");
    const input = argumentsOf(item);
    if (capabilityId === undefined || input === undefined) return undefined;
    const key = this.#calls.key(callIdOf(item), capabilityId, input.value);
    return key === undefined ? undefined : this.#calls.ids.get(key);
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
      await this.#calls.resume(requestId, callIdOf(item), capabilityId);
    } catch (error) {
      return errorText(error);
    }
    // Unreachable: a rejected request is never consumed. Fail closed.
    return errorText(undefined);
  }
}
