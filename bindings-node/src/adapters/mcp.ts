/**
 * MCP adapter: governed capabilities as tools of an `@modelcontextprotocol/sdk`
 * `McpServer`, registered with `registerTool`.
 *
 * - tools/list shows each descriptor as the core built it: description, input
 *   and output JSON Schema, and the annotations the core derived from the
 *   metadata plus `adapters.mcp.annotations` (never recomputed here).
 * - The SDK validates arguments only as "an object"; the pipeline validates
 *   them with the procedure's own schema at stage 4, so there is one
 *   validation and one error shape (`INVALID_INPUT`).
 * - tools/call runs the pipeline on surface `mcp` (SI-2: the adapter fixes the
 *   surface whatever the app's frame says), with the request's abort signal
 *   and the `traceparent`/`tracestate` of `params._meta`.
 * - Outcomes (the core's `mcp` results, as in Python): output → its text (a
 *   string as is, else compact JSON) and, when the tool publishes an object
 *   output schema, `structuredContent`; a `CapabilityError` →
 *   `isError` with `CODE: message` and a hint the model can act on, the code
 *   in `_meta["orpc-agent/error"]`; approval required → `isError` (the call
 *   did not run) with the approval id and what to do, the request in
 *   `_meta["orpc-agent/approval"]`. Once the request is approved, the client
 *   calls the same tool again with `_meta["orpc-agent/approvalId"]` to
 *   resume it; the core resumes only a request for that tool's capability,
 *   made on MCP by the same actor (`throughTool`), re-checks the grant and
 *   runs the stored input.
 */

import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type * as Zod from "zod";

import { callGoverned, type ToolTarget } from "./mcp-call.js";
import { registerTaskTool, type McpTaskOptions } from "./mcp-tasks.js";
import { optionalPeer } from "./optional-peer.js";
import type { AdapterFrame, AdapterRegistry, CapabilityDescriptor } from "./registry-port.js";

/** The part of the SDK's `RequestHandlerExtra` the adapter reads. */
export interface McpRequestExtra {
  signal: AbortSignal;
  requestId: string | number;
  sessionId?: string;
  _meta?: Record<string, unknown>;
  authInfo?: unknown;
  /** Sends a notification related to this request (the SDK's `extra.sendNotification`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the SDK types it as its ServerNotification union
  sendNotification?: (notification: any) => Promise<void>;
}

export interface RegisterMcpToolsOptions {
  /**
   * The frame of one tools/call, from the authenticated transport (actor,
   * application context, request/agent/session ids). Surface, abort signal
   * and, when the app sets none, trace and MCP session id come from the
   * request. (The JSON-RPC request id is unique per connection only: an app
   * that wants it in audit records sets `requestId: String(extra.requestId)`.)
   */
  frame?: (extra: McpRequestExtra) => AdapterFrame | Promise<AdapterFrame>;
  /** List contextual capabilities too (default: left out, as in the AI SDK adapter). */
  includeContextual?: boolean;
  /**
   * In-band confirmation: an approval request of one of these types (the
   * ones your application lets the end user decide, e.g.
   * `"human-confirmation"`) is put to the person at the client through MCP
   * elicitation when the client declared that capability. Accept records
   * the approval (approver: the frame's actor, under `approverMustDiffer`)
   * and runs the call once; decline or cancel rejects it. A client without
   * elicitation, a decision the core refuses under `approverMustDiffer`,
   * or no answer before the request expires leaves the ordinary
   * approval-required result; a request decided elsewhere meanwhile (an
   * identical call's accept, an approval UI) answers what became of it.
   */
  confirmInClient?: { approvalTypes: readonly string[] };
  /**
   * MCP tasks (protocol 2025-11-25; the server needs a `taskStore` and the
   * `tasks.requests.tools.call` capability): capabilities that declare an
   * approval are listed with `execution.taskSupport: "optional"`. Asked for
   * a task, such a call returns one at once that reports `input_required`
   * while its approval request is pending, then runs once when it is
   * approved (completed) or fails when it is rejected or expires; a task
   * cancelled meanwhile aborts the call's signal. Asked without one (or
   * with no `task.ttl`), it answers as a plain tool. In a task, the
   * approval waits for a decision made elsewhere: `confirmInClient` asks
   * only in plain calls.
   */
  tasks?: McpTaskOptions;
}

/** Registers the capabilities exposed on surface `mcp`; returns the SDK's handles by tool name. */
export function registerMcpTools(
  server: McpServer,
  registry: AdapterRegistry,
  options: RegisterMcpToolsOptions = {},
): Map<string, RegisteredTool> {
  const z = optionalPeer<typeof Zod>("zod", "registerMcpTools");
  const registered = new Map<string, RegisteredTool>();
  for (const descriptor of registry.descriptors({ surface: "mcp" })) {
    if (descriptor.discovery === "contextual" && options.includeContextual !== true) continue;
    const name = descriptor.toolNames.mcp;
    const tool: ToolTarget = {
      registry,
      server,
      capabilityId: descriptor.id,
      toolName: name,
      options,
      timeoutMs: descriptor.timeoutMs,
    };
    const structured = publishesOutputSchema(descriptor);
    if (options.tasks !== undefined && descriptor.approval.required) {
      registered.set(
        name,
        registerTaskTool(server, tool, toolConfig(z, descriptor), structured, descriptor.timeoutMs, options.tasks),
      );
      continue;
    }
    registered.set(
      name,
      server.registerTool(name, toolConfig(z, descriptor), (args: Record<string, unknown>, extra: McpRequestExtra) =>
        callGoverned(tool, structured, args, extra),
      ),
    );
  }
  return registered;
}

/** MCP structured content is an object: other output schemas are not published (their outputs travel as text). */
function publishesOutputSchema(descriptor: CapabilityDescriptor): boolean {
  return descriptor.outputSchema?.type === "object";
}

function toolConfig(z: typeof Zod, descriptor: CapabilityDescriptor) {
  const outputSchema = descriptor.outputSchema;
  return {
    description: descriptor.description,
    inputSchema: publishedSchema(z, descriptor.inputSchema),
    ...(outputSchema !== undefined && publishesOutputSchema(descriptor)
      ? { outputSchema: publishedSchema(z, outputSchema) }
      : {}),
    annotations: descriptor.annotations,
  };
}

/**
 * A schema the SDK accepts as any object at validation time (unknown keys
 * kept: the pipeline validates) and lists as exactly the descriptor's JSON
 * Schema: zod's `toJSONSchema` override (`_zod.toJSONSchema`) replaces the
 * loose object's own `additionalProperties: {}`, which would make every tool
 * open to any key (not portable). The SDK's draft-07 `$schema`, which zod
 * writes first, is cleared when the descriptor has none (zod's output is
 * JSON: an undefined key is dropped). A copy per listing: the SDK's
 * conversion may rewrite the object it gets.
 */
function publishedSchema(z: typeof Zod, jsonSchema: Record<string, unknown>) {
  const schema = z.looseObject({});
  const text = JSON.stringify(jsonSchema);
  schema._zod.toJSONSchema = () => ({ $schema: undefined, ...JSON.parse(text) });
  return schema;
}
