/**
 * What the model may read of an AI SDK tool call: the adapters' fixed texts,
 * `modelSafe` (the output's JSON form, and only the library's errors), and
 * the two errors the AI SDK adapter throws. Apart from `ai-sdk.ts` so the
 * tool set and its calls stay the adapter's steps.
 */

import { INTERNAL_MESSAGE } from "../errors.js";
import { modelJsonText } from "../json.js";
import { N } from "../native.js";
import { CapabilityError, modelErrorText } from "./registry-port.js";

/** The adapters' fixed texts, the core's (`orpc_agent_core::agent_tools`). */
export const MESSAGES: { readonly unknownApproval: string; readonly outputNotJson: string } = JSON.parse(
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
export async function modelSafe(
  result: Promise<unknown>,
  failed: (what: string, error: unknown) => void,
): Promise<unknown> {
  let output: unknown;
  try {
    output = await result;
  } catch (error) {
    if (error instanceof AiSdkApprovalRequiredError || error instanceof AiSdkToolError) throw error;
    let told: AiSdkToolError | undefined;
    try {
      if (error instanceof CapabilityError) told = new AiSdkToolError(error);
    } catch (unreadable) {
      failed("the tool call's error", unreadable); // a getter of the app's error that throws
    }
    if (told !== undefined) throw told;
    failed("the tool call", error);
    throw new AiSdkToolError(new CapabilityError("INTERNAL", INTERNAL_MESSAGE));
  }
  if (output === undefined || output === null || typeof output === "string" || typeof output === "boolean")
    return output;
  let text: string | undefined;
  try {
    text = modelJsonText(output);
  } catch (error) {
    failed("the output's JSON form", error);
    // No JSON form (a throwing `toJSON` or getter, a BigInt, a cycle): its text is not shown.
    throw new AiSdkToolError(new CapabilityError("INTERNAL", MESSAGES.outputNotJson));
  }
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * A failed call as `execute` throws it. `ai` sends the model a thrown
 * error's `message` alone, so this error's message is the core's text for
 * the model (`CODE: message. Hint`), word for word what the MCP, OpenAI
 * Agents and PydanticAI adapters send; its code, retryable flag and details
 * are the failure's, and `error` is the failure itself.
 */
export class AiSdkToolError extends CapabilityError {
  constructor(readonly error: CapabilityError) {
    super(error.code, modelErrorText(error), { retryable: error.retryable, details: error.details });
    (this as { kind: string }).kind = error.kind;
  }
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
