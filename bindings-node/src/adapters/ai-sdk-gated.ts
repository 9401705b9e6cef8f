/**
 * What the AI SDK adapter's gate (`gateNeedsApproval`) leaves for a call's
 * `execute` — its outcome, its progress, its hold before the handler — and
 * how `execute` finds them: under the tool call id, and only for the very
 * call the gate saw (its tool and arguments), since a provider may give two
 * calls of one step the same id. Apart from `ai-sdk-calls.ts` to keep each
 * module whole.
 */

import type { HandlerHold, Settled } from "../handler-hold.js";
import type { ToolSetState } from "./ai-sdk-calls.js";
import type { Running } from "./ai-sdk-progress.js";

/**
 * What the gate left for this call (`name` with `input` under `toolCallId`),
 * taken: its outcome, its progress, its hold. Nothing when the entries under
 * the id are another call's (a provider that gave two calls of a step one
 * id): those stay for their own `execute`, and this call runs through the
 * pipeline here, once.
 */
export function takeGated(
  state: ToolSetState,
  toolCallId: string,
  name: string,
  input: unknown,
): { settled: Promise<Settled> | undefined; running: Running | undefined; hold: HandlerHold | undefined } | undefined {
  if (!state.gatedCalls.has(toolCallId)) return undefined;
  const identity = state.gatedCalls.get(toolCallId);
  if (identity === undefined || identity !== callIdentity(name, input)) return undefined;
  const taken = {
    settled: state.settled.get(toolCallId),
    running: state.running.get(toolCallId),
    hold: state.held.get(toolCallId),
  };
  state.gatedCalls.delete(toolCallId);
  state.settled.delete(toolCallId);
  state.running.delete(toolCallId);
  state.held.delete(toolCallId);
  return taken;
}

/** A call's tool and arguments as one string; `undefined` for arguments with no JSON text (then no call matches it). */
export function callIdentity(name: string, input: unknown): string | undefined {
  try {
    const text = JSON.stringify(input === undefined ? null : input);
    return text === undefined ? undefined : `${name}\u0000${text}`;
  } catch {
    return undefined;
  }
}

/**
 * Forgets what an earlier call under this id left for an `execute` that
 * never came (its outcome, its progress): it is not this call's.
 */
export function forgetUnread(state: ToolSetState, toolCallId: string): void {
  state.gatedCalls.delete(toolCallId);
  state.settled.delete(toolCallId);
  state.running.delete(toolCallId);
  state.held.get(toolCallId)?.release(false); // never executed: it ends unrun (CANCELLED)
  state.held.delete(toolCallId);
}
