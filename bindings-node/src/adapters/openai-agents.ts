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
 * it; the adapter answers by running the governed call up to its handler:
 *
 * - `approval_required` → `true`: the core stored a request, its id is kept
 *   under the caller and the tool call id, and the run ends with an
 *   interruption (`result.interruptions`);
 * - passed (no approval needed) → `false`: the call waits before its handler
 *   for the SDK's call of the tool, which runs it — the pipeline runs once.
 *   A call the SDK then never makes (a run cancelled meanwhile) never runs:
 *   it ends CANCELLED when another call comes under its id, or at its
 *   deadline (TIMEOUT, never started);
 * - refused before the handler → `false`: the tool returns the core's error
 *   text.
 *
 * Answer an interruption with `await governed.approve(state, item,
 * {approver})` (the core's approve, then `state.approve`) or `await
 * governed.reject(state, item, {approver})` (the core's reject, then
 * `state.reject` with the core's text for the model), then run the state
 * again; `state.toString()` / `RunState.fromString` in between are fine. The
 * approved call resumes the core's request once (only this tool's request,
 * made on `aiSdk` by this caller); a replay is refused by the core
 * (`APPROVAL_CONSUMED`). A call asked about again keeps its one request
 * while it is pending or approved; once run or rejected, it is answered
 * with the core's refusal, never with a second request
 * (`agent_tools::kept_request`). A plain `state.approve(item)` works too: the adapter
 * records it as the core's decision (approver: the `approver` option, else
 * the frame's actor id) unless `decideApprovals: false`. A plain
 * `state.reject(item)` never reaches a tool: the core's request stays pending
 * until it expires.
 *
 * What the model reads of a call without an output is the core's text
 * (`CODE: message` and the code's hint); anything thrown that is not a
 * `CapabilityError` is `INTERNAL` with a fixed text.
 */

import type { ApprovalIdStore } from "./approval-ids.js";
import { GovernedAgentTools } from "./openai-agents-tools.js";
import type { AdapterFrame, AdapterRegistry } from "./registry-port.js";

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

/** The registry's capabilities exposed on `aiSdk`, as OpenAI Agents SDK function tools for one caller. */
export function governedAgentTools(
  registry: AdapterRegistry,
  frame: AdapterFrame = {},
  options: OpenAiAgentsToolsOptions = {},
): GovernedAgentTools {
  return new GovernedAgentTools(registry, frame, options);
}
