/**
 * The OpenAI Agents adapter's calls (`GovernedAgentTools` in
 * `openai-agents-tools.ts` builds the tools and answers interruptions): the
 * gate `needsApproval` asks — a call that passes it waits before its handler
 * for the SDK's call of the tool (`handler-hold.ts`), so one the SDK never
 * makes (a cancelled run) never runs — the approved run, and the frame,
 * key and resume of one model tool call.
 */

import { invokeToHandler, type HandlerHold, type Settled } from "../handler-hold.js";
import { INTERNAL_MESSAGE } from "../errors.js";
import { N } from "../native.js";
import type { Frame } from "../types.js";
import { approvalKey, callerRequired, type ApprovalIdStore } from "./approval-ids.js";
import type { OpenAiAgentsToolsOptions } from "./openai-agents.js";
import { errorText, OpenAiAgentsPrincipalRequiredError, outputText } from "./openai-agents-answers.js";
import {
  CapabilityError,
  logAdapterFailure,
  resumeAsRequester,
  type AdapterFrame,
  type AdapterRegistry,
  type InvokeResult,
} from "./registry-port.js";

/** A call `needsApproval` let through: held before its handler until the SDK calls the tool. */
interface Passed {
  hold: HandlerHold | undefined;
  settled: Promise<Settled>;
}

/** One caller's governed tool calls. */
export class AgentToolCalls {
  readonly #passed = new Map<string, Passed>();

  constructor(
    readonly registry: AdapterRegistry,
    readonly frame: AdapterFrame,
    readonly options: OpenAiAgentsToolsOptions,
    readonly ids: ApprovalIdStore,
  ) {}

  /** `true` iff the core asks for approval of this call. */
  async gate(name: string, capabilityId: string, input: unknown, callId: string | undefined): Promise<boolean> {
    // No id pairs this answer with the SDK's call of the tool: the tool runs the pipeline then.
    if (callId === undefined) return false;
    // What an earlier call under this id left (its run ended before the
    // tool was called) is not this call's: a held one ends unrun.
    this.#forget(callId);
    const key = this.key(callId, capabilityId, input);
    const kept = key === undefined ? undefined : this.ids.get(key);
    let outcome: InvokeResult;
    try {
      // Asked again about a call already presented: a resumed run with the
      // call undecided keeps its one request; one run or refused already
      // gets the core's answer for it (`agent_tools::kept_request`).
      const request = kept === undefined ? null : await this.registry.approvals.get(kept);
      const step = N.agentToolKeptRequest(
        kept !== undefined,
        request?.status ?? null,
        request?.capabilityId === capabilityId,
      );
      if (step === "holds") return true;
      if (kept !== undefined && step === "decided") {
        outcome = await this.resume(kept, callId, capabilityId);
      } else {
        // The gate only: a call that passes it waits before its handler for
        // the SDK's call of the tool (which a cancelled run never makes).
        const gated = await invokeToHandler(
          (frame) => this.registry.invoke(capabilityId, input, frame),
          this.#modelFrame(callId),
        );
        if (gated.hold !== undefined) {
          this.#passed.set(callId, gated);
          return false;
        }
        const settled = await gated.settled;
        if (!settled.ok) throw settled.error;
        outcome = settled.outcome;
      }
    } catch (error) {
      if (callerRequired(error)) throw new OpenAiAgentsPrincipalRequiredError(name);
      logAdapterFailure(this.registry, capabilityId, "the tool call", error);
      this.#passed.set(callId, { hold: undefined, settled: Promise.resolve({ ok: false, error }) });
      return false;
    }
    if (outcome.status === "approval_required") {
      // The core stores requests on this surface only for a named caller,
      // so only arguments with no JSON get here without a key: fail closed.
      if (key === undefined) throw new CapabilityError("INTERNAL", INTERNAL_MESSAGE);
      this.ids.set(key, outcome.request.id);
      return true;
    }
    this.#passed.set(callId, { hold: undefined, settled: Promise.resolve({ ok: true, outcome }) });
    return false;
  }

  /** Forgets what the gate left under `callId`; a call held there ends unrun (CANCELLED). */
  #forget(callId: string): void {
    this.#passed.get(callId)?.hold?.release(false);
    this.#passed.delete(callId);
  }

  async run(capabilityId: string, callId: string | undefined, input: unknown): Promise<string> {
    const passed = callId === undefined ? undefined : this.#passed.get(callId);
    let outcome: InvokeResult;
    if (callId !== undefined && passed !== undefined) {
      this.#passed.delete(callId);
      passed.hold?.release(true); // the SDK calls the tool: its handler runs now
      const settled = await passed.settled;
      if (!settled.ok) {
        // The gate told the operator of a failure before the handler; this is one after it.
        if (passed.hold !== undefined) logAdapterFailure(this.registry, capabilityId, "the tool call", settled.error);
        return errorText(settled.error);
      }
      outcome = settled.outcome;
    } else {
      const key = this.key(callId, capabilityId, input);
      const requestId = key === undefined ? undefined : this.ids.get(key);
      try {
        if (requestId !== undefined) {
          // The approved call: the core's request, resumed once.
          if (this.options.decideApprovals !== false) await this.#recordApproval(requestId);
          outcome = await this.resume(requestId, callId, capabilityId);
        } else {
          // Called without the gate first: run here.
          outcome = await this.registry.invoke(capabilityId, input, this.#modelFrame(callId));
        }
      } catch (error) {
        logAdapterFailure(this.registry, capabilityId, "the tool call", error);
        return errorText(error);
      }
    }
    if (outcome.status === "approval_required") {
      return N.agentToolApprovalRequiredText(outcome.request.id, outcome.request.reason ?? null);
    }
    return this.#outputText(capabilityId, outcome.output);
  }

  /** The output as the model reads it; one with no JSON form is INTERNAL, and the operator is told why. */
  #outputText(capabilityId: string, output: unknown): string {
    return outputText(output, (e) => logAdapterFailure(this.registry, capabilityId, "the output's JSON form", e));
  }

  /** The frame of one model tool call: surface `aiSdk` always; the tool call id as request id when the app sets none. */
  #modelFrame(callId: string | undefined): Frame {
    return { ...this.frame, surface: "aiSdk", requestId: this.frame.requestId ?? callId };
  }

  /** Only this tool's request, made by this caller on this surface. */
  resume(requestId: string, callId: string | undefined, capabilityId: string): Promise<InvokeResult> {
    return resumeAsRequester(this.registry, requestId, this.#modelFrame(callId), capabilityId);
  }

  /** The core's request-id store key (`approvalKey`): this caller's, this call's (its tool and arguments). */
  key(callId: string | undefined, capabilityId: string, input: unknown): string | undefined {
    return callId === undefined ? undefined : approvalKey(this.frame, callId, capabilityId, input);
  }

  /** The SDK's approval as the core's decision. Already decided: the resume that follows reports the core's view. */
  async #recordApproval(requestId: string): Promise<void> {
    const approver = N.agentToolRecordedApprover(this.options.approver, this.frame.actor?.id) ?? undefined;
    try {
      await this.registry.approvals.approve(requestId, approver === undefined ? {} : { approver });
    } catch (error) {
      if (!(error instanceof CapabilityError)) throw error;
    }
  }
}
