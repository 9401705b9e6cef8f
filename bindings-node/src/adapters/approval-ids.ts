/**
 * The approval-id memory the in-process model-driven adapters share (the AI
 * SDK's and the OpenAI Agents SDK's): where a request id waits between the
 * approval turn and the approved re-run, the default bounded store (one per
 * registry), and the core's refusal of a gated call whose frame names no
 * caller (so no key). Apart from `ai-sdk.ts` because
 * `openai-agents-tools.ts` uses it too.
 */

import { N } from "../native.js";
import type { Frame } from "../types.js";
import { CapabilityError, type AdapterRegistry } from "./registry-port.js";

/**
 * Where approval request ids wait between the approval turn and the approved
 * re-run, under a key made of the frame's actor id, session id, the tool
 * call id and the call's tool and arguments (so one user's history cannot
 * reach another's request, and a reused call id for another call finds
 * none), as the core forms it (`approvalKey`). A frame with neither an actor
 * id nor a session id has no key: the core refuses its gated calls before
 * storing anything, and the approval turn fails
 * (`AiSdkPrincipalRequiredError`).
 */
export interface ApprovalIdStore {
  get(key: string): string | undefined;
  set(key: string, requestId: string): void;
  delete(key: string): void;
}

/**
 * The default in-process store of request ids: the most recent 10 000 keys
 * (as Python's). A key evicted makes a replayed call a new call, which the
 * core gates again; nothing grows without bound.
 */
export class BoundedApprovalIds implements ApprovalIdStore {
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

const approvalIdsByRegistry = new WeakMap<AdapterRegistry, ApprovalIdStore>();

/** One in-process store per registry, shared by every tool set built from it (and by the OpenAI Agents adapter). */
export function sharedApprovalIds(registry: AdapterRegistry): ApprovalIdStore {
  let store = approvalIdsByRegistry.get(registry);
  if (store === undefined) {
    store = new BoundedApprovalIds();
    approvalIdsByRegistry.set(registry, store);
  }
  return store;
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

/**
 * The key a tool call's request id is kept under, the core's
 * (`agent_tools::approval_key`): the frame's actor id and session id, the
 * tool call id, and the call itself (the tool and the model's arguments,
 * hashed by the core). `undefined` when the frame names no caller or the
 * arguments have no JSON text: nothing is kept or looked up then.
 */
export function approvalKey(
  frame: Pick<Frame, "actor" | "sessionId">,
  toolCallId: string,
  tool: string,
  input: unknown,
): string | undefined {
  const actorId = frame.actor?.id;
  const sessionId = frame.sessionId;
  let text: string | undefined;
  try {
    // No arguments at all are JSON's null, as in Python.
    text = JSON.stringify(input === undefined ? null : input);
  } catch {
    return undefined; // a BigInt or a cycle: no JSON, so no key
  }
  return (
    N.agentToolApprovalKey(
      typeof actorId === "string" ? actorId : null,
      typeof sessionId === "string" ? sessionId : null,
      toolCallId,
      tool,
      text ?? "",
    ) ?? undefined
  );
}
