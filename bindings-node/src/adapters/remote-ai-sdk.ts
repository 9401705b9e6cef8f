/**
 * Remote AI SDK adapter: the capabilities of an agent gateway as real `ai`
 * tools whose `execute` calls the gateway over HTTP.
 *
 * It reuses the AI SDK adapter (`ai-sdk.ts`) unchanged — same
 * `needsApproval` gate, same approval-id memory, same resume — over a small
 * registry port (`remote-registry.ts`) whose `invoke`, `resume`,
 * `approvals` and `descriptors` are gateway calls. So the approval decision stays the core's (on the
 * gateway's side), asked once per tool call, and nothing about governance
 * lives here. Contextual capabilities are left out of the unbound list
 * (`toAiSdkTools` skips them).
 *
 * **Bound presentation** (`presentBound`): a UI presents ONE capability —
 * usually a contextual one — with some arguments fixed ("refund order 42")
 * as one `ai` tool and as a `run(input)` action. The fixed arguments are
 * merged on the client, fixed values winning over the model's, and the
 * tool's input schema shows only the free arguments. Binding is a
 * presentation, not a grant: the gateway receives the full input and runs
 * every stage on it (validation, policies, approval gate, audit) exactly as
 * for any other call on its surface.
 */
import type { ToolSet } from "ai";

import { CapabilityError } from "../errors.js";
import { NOT_FOUND_MESSAGE } from "../generated/protocol.js";
import { N } from "../native.js";
import type { CapabilityDescriptor, TraceContext } from "../types.js";
import { createGatewayClient, type AgentGatewayClient, type GatewayClientOptions } from "../gateway/client.js";
import type { GatewayInvokeOutput } from "../gateway/wire.js";
import { toAiSdkTools, type AiSdkToolsOptions } from "./ai-sdk.js";
import { BoundedApprovalIds, type ApprovalIdStore } from "./approval-ids.js";
import { callOptions, merge, remote, remoteRegistry } from "./remote-registry.js";

/**
 * What a remote tool set knows of its caller. The actor and surface are the
 * gateway's (from its authentication and mount); `actorId` and `sessionId`
 * only key the client-side approval-id memory, and `trace` travels as
 * `traceparent`/`tracestate` headers.
 */
export interface RemoteFrame {
  actorId?: string;
  sessionId?: string;
  trace?: TraceContext;
  signal?: AbortSignal;
}

export interface RemoteAiSdkToolsOptions extends Omit<AiSdkToolsOptions, "approver"> {
  /** A gateway client (e.g. `createGatewayClient`, or the app's own client at the gateway's key). */
  client?: AgentGatewayClient;
  /** Or the gateway's URL (a client over `@orpc/client`'s fetch link is made). */
  url?: GatewayClientOptions["url"];
  headers?: GatewayClientOptions["headers"];
  fetch?: GatewayClientOptions["fetch"];
  frame?: RemoteFrame;
}

/** The gateway's tools for `ai`: every discoverable capability of its surface. */
export async function createRemoteAiSdkTools(options: RemoteAiSdkToolsOptions): Promise<ToolSet> {
  const client = clientOf(options);
  const frame = options.frame ?? {};
  const listed = await remote(() => client.descriptors({ format: "json" }, callOptions(frame)));
  if (listed.format !== "json")
    throw new CapabilityError("INTERNAL", "The gateway did not answer with JSON descriptors.");
  return toAiSdkTools(
    remoteRegistry(client, listed.descriptors, undefined),
    adapterFrame(frame),
    withApprovalIds(options),
  );
}

export interface BoundPresentationOptions extends RemoteAiSdkToolsOptions {
  /** The capability id or tool name to present (contextual or not). */
  capability: string;
  /** Arguments fixed by the UI's context; they win over the model's. */
  fixed: Record<string, unknown>;
  /** The tool's name (default: the capability's AI SDK tool name). */
  toolName?: string;
  /** The tool's description (default: the capability's, naming the fixed arguments). */
  description?: string;
}

export interface BoundPresentation {
  /** The capability as the gateway describes it. */
  readonly descriptor: CapabilityDescriptor;
  readonly toolName: string;
  /** One `ai` tool: the free arguments only; approval through `needsApproval`. */
  readonly tools: ToolSet;
  /** Runs it as a UI action (fixed arguments merged): the gateway's outcome. */
  run(input?: Record<string, unknown>): Promise<GatewayInvokeOutput>;
  /** Resumes an approved request this presentation made. */
  resume(requestId: string): Promise<GatewayInvokeOutput>;
}

/** One capability of the gateway, presented with some arguments fixed. */
export async function presentBound(options: BoundPresentationOptions): Promise<BoundPresentation> {
  const client = clientOf(options);
  const frame = options.frame ?? {};
  const fixed = { ...options.fixed };
  const listed = await remote(() => client.descriptors({ format: "json" }, callOptions(frame)));
  if (listed.format !== "json")
    throw new CapabilityError("INTERNAL", "The gateway did not answer with JSON descriptors.");
  const descriptor = listed.descriptors.find(
    (d) =>
      d.id === options.capability || d.toolNames.aiSdk === options.capability || d.toolNames.mcp === options.capability,
  );
  if (descriptor === undefined) throw new CapabilityError("NOT_FOUND", NOT_FOUND_MESSAGE);
  const toolName = options.toolName ?? descriptor.toolNames.aiSdk;
  const presented: CapabilityDescriptor = {
    ...descriptor,
    // Presented bound, so listed: the unbound rule is about the open list.
    discovery: "discoverable",
    toolNames: { ...descriptor.toolNames, aiSdk: toolName },
    description: options.description ?? N.gatewayBoundDescription(descriptor.description, JSON.stringify(fixed)),
    ...(descriptor.inputSchema === undefined ? {} : { inputSchema: withoutFixed(descriptor.inputSchema, fixed) }),
  };
  const bind = { name: toolName, id: descriptor.id, fixed };
  const tools = toAiSdkTools(remoteRegistry(client, [presented], bind), adapterFrame(frame), withApprovalIds(options));
  return {
    descriptor,
    toolName,
    tools,
    run: (input = {}) =>
      remote(() => client.invoke({ capability: descriptor.id, input: merge(input, fixed) }, callOptions(frame))),
    // Only this capability's request (the gateway's core checks it).
    resume: (requestId) =>
      remote(() => client.approvals.resume({ id: requestId, throughTool: descriptor.id }, callOptions(frame))),
  };
}

function adapterFrame(frame: RemoteFrame) {
  return {
    ...(frame.actorId === undefined ? {} : { actor: { id: frame.actorId } }),
    ...(frame.sessionId === undefined ? {} : { sessionId: frame.sessionId }),
    ...(frame.trace === undefined ? {} : { trace: frame.trace }),
    ...(frame.signal === undefined ? {} : { signal: frame.signal }),
  };
}

/**
 * Approval ids must outlive one tool set: apps build tools per request, and
 * the approved re-run comes in a later request. Default: one in-process map
 * per gateway client (or per URL), as the in-process adapter keeps one per
 * registry.
 */
const approvalIdsByClient = new WeakMap<object, ApprovalIdStore>();
const approvalIdsByUrl = new Map<string, ApprovalIdStore>();

function withApprovalIds(options: RemoteAiSdkToolsOptions): AiSdkToolsOptions {
  if (options.approvalIds !== undefined) return options;
  let store: ApprovalIdStore | undefined;
  if (options.client !== undefined) {
    store = approvalIdsByClient.get(options.client);
    if (store === undefined) {
      store = new BoundedApprovalIds();
      approvalIdsByClient.set(options.client, store);
    }
  } else {
    const url = String(options.url);
    store = approvalIdsByUrl.get(url);
    if (store === undefined) {
      store = new BoundedApprovalIds();
      approvalIdsByUrl.set(url, store);
    }
  }
  return { ...options, approvalIds: store };
}

function clientOf(options: RemoteAiSdkToolsOptions): AgentGatewayClient {
  if (options.client !== undefined) return options.client;
  if (options.url === undefined) throw new TypeError("createRemoteAiSdkTools needs a `client` or a `url`.");
  return createGatewayClient({
    url: options.url,
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
}

/** The input schema without the fixed properties (the model sees only the free ones). */
function withoutFixed(schema: Record<string, unknown>, fixed: Record<string, unknown>): Record<string, unknown> {
  const properties = schema.properties;
  if (properties === null || typeof properties !== "object") return schema;
  const free: Record<string, unknown> = { ...(properties as Record<string, unknown>) };
  for (const key of Object.keys(fixed)) delete free[key];
  const out: Record<string, unknown> = { ...schema, properties: free };
  if (Array.isArray(schema.required)) out.required = schema.required.filter((k) => !(k in fixed));
  return out;
}
