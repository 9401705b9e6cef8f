/**
 * What an MCP client is told of a call that returned no output — the
 * error text with its hint, the approval request and how to resume it —
 * is the core's (`orpc_agent_core::mcp`), the same words in Node and
 * Python. This turns its JSON into the SDK's result; conversion only.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

import { CapabilityError, call } from "./errors.js";
import { modelJsonText, optionalJsonText, toJsonText } from "./json.js";
import { N } from "./native.js";
import type { ApprovalRequest } from "./types.js";

/** The adapters' fixed texts (the core's `agent_tools`). */
const MESSAGES: { outputNotJson: string; failed: string } = JSON.parse(N.agentToolMessages());

/** The result of a failed call; anything but a `CapabilityError` is INTERNAL. */
export function mcpErrorResult(error: unknown): CallToolResult {
  const e = error instanceof CapabilityError ? error : new CapabilityError("INTERNAL", MESSAGES.failed);
  return JSON.parse(call(() => N.mcpErrorResult(e.code, e.message, e.retryable, optionalJsonText(e.details))));
}

/**
 * The text a model reads of a failed call (`CODE: message. Hint`), as every
 * adapter sends it; anything but a `CapabilityError` is INTERNAL.
 */
export function modelErrorText(error: unknown): string {
  const text = mcpErrorResult(error).content[0];
  return text !== undefined && text.type === "text" ? text.text : MESSAGES.failed;
}

/**
 * The core's `mcp::ok_parts` for each (a string, an object, a published
 * output schema), indexed by those three bits: its answers, asked once
 * when the module loads rather than in a crossing per tools/call.
 */
const OK_PARTS: readonly number[] = Array.from({ length: 8 }, (_, i) =>
  N.mcpOkParts((i & 4) !== 0, (i & 2) !== 0, (i & 1) !== 0),
);

/** INTERNAL's text for an output with no JSON form. */
const OUTPUT_NOT_JSON = MESSAGES.outputNotJson;

/**
 * The result of a call that returned `output` (`mcp::ok_result`: a string as
 * it is, else compact JSON; `structuredContent` when the tool publishes an
 * output schema and the output is an object). What the SDK sends is the
 * JSON checked here (`modelJsonText`). No JSON form (a throwing `toJSON` or getter, a BigInt, a
 * cycle, a NaN or infinite number): INTERNAL, its text not shown;
 * `noJson` hears why (the operator's).
 */
export function mcpOkResult(
  output: unknown,
  publishesOutputSchema: boolean,
  noJson?: (error: unknown) => void,
): CallToolResult {
  let text: string | undefined;
  try {
    text = modelJsonText(output);
  } catch (error) {
    noJson?.(error);
    return mcpErrorResult(new CapabilityError("INTERNAL", OUTPUT_NOT_JSON));
  }
  const json = text ?? "null";
  const isObject = json.charCodeAt(0) === 123; /* { */
  const parts = OK_PARTS[(typeof output === "string" ? 4 : 0) | (isObject ? 2 : 0) | (publishesOutputSchema ? 1 : 0)]!;
  const result: CallToolResult = {
    content: [{ type: "text", text: parts & 1 ? (output as string) : json }],
    isError: false,
  };
  // The structured content is the JSON just written, read back: what the SDK
  // sends is what was checked here.
  if (parts & 2) result.structuredContent = JSON.parse(json);
  return result;
}

/** The result of a call that needs approval. */
export function mcpApprovalResult(request: ApprovalRequest): CallToolResult {
  return JSON.parse(call(() => N.mcpApprovalResult(toJsonText(request))));
}

/** The `_meta` keys, as the core names them. */
export const MCP_META_KEYS: { readonly approvalId: string; readonly approval: string; readonly error: string } =
  JSON.parse(N.mcpMetaKeys());
