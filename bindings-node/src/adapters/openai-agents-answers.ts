/**
 * What the OpenAI Agents SDK adapter says: the core's text for a call's
 * output or failure (what the model reads), the adapter's fixed texts, and
 * the error its gate throws when the frame names no caller. Apart from
 * `openai-agents-tools.ts` so the tool set's class stays its steps.
 */

import { modelJsonText } from "../json.js";
import { N } from "../native.js";
import { CapabilityError, modelErrorText } from "./registry-port.js";

export const MESSAGES: { readonly outputNotJson: string; readonly unknownInterruption: string } = JSON.parse(
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

/** The core's text for a call that failed; anything not a `CapabilityError` is INTERNAL. */
export const errorText: (error: unknown) => string = modelErrorText;

/**
 * The output as the model reads it: a string as it is, anything else its
 * JSON text. `noJson` hears why an output has no JSON form (the operator's).
 */
export function outputText(output: unknown, noJson?: (error: unknown) => void): string {
  if (typeof output === "string") return output;
  try {
    return modelJsonText(output) ?? "null";
  } catch (error) {
    noJson?.(error);
    // No JSON form (a throwing `toJSON`, a BigInt, a cycle): its text is not shown.
    return errorText(new CapabilityError("INTERNAL", MESSAGES.outputNotJson));
  }
}

/**
 * The model's arguments of a run interruption, parsed as the SDK parses them
 * for `needsApproval` (`JSON.parse` of the call's text); `undefined` when
 * they are no JSON.
 */
export function argumentsOf(item: { arguments?: string | undefined }): { value: unknown } | undefined {
  if (typeof item.arguments !== "string") return undefined;
  try {
    return { value: JSON.parse(item.arguments) as unknown };
  } catch {
    return undefined;
  }
}

/** The tool call id of a run interruption (the SDK's approval item), if it has one. */
export function callIdOf(item: { rawItem: unknown }): string | undefined {
  const callId = (item.rawItem as { callId?: unknown }).callId;
  return typeof callId === "string" ? callId : undefined;
}
