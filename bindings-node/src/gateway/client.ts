/**
 * A client of an agent gateway: `@orpc/client` with its fetch link, which
 * sends the W3C trace context of each call (`context.trace`) as
 * `traceparent`/`tracestate` headers (formatted by the core).
 */
import type { RouterClient } from "@orpc/server";

import { optionalPeer } from "../adapters/optional-peer.js";
import type { TraceContext } from "../types.js";
import type { AgentGatewayRouter } from "./server.js";
import { traceHeaders } from "./trace-headers.js";

/** What a call may carry to the gateway besides its body. */
export interface GatewayClientContext {
  trace?: TraceContext;
}

export type AgentGatewayClient = RouterClient<AgentGatewayRouter, GatewayClientContext>;

export interface GatewayClientOptions {
  /** The URL the gateway router is mounted at (the RPC handler's prefix). */
  url: string | URL;
  /** Headers of every call (the app's credentials: cookie, authorization). */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  fetch?: typeof globalThis.fetch;
}

/** A gateway client over `@orpc/client`'s `RPCLink` (fetch). */
export function createGatewayClient(options: GatewayClientOptions): AgentGatewayClient {
  const { createORPCClient } = optionalPeer<typeof import("@orpc/client")>("@orpc/client", "createGatewayClient");
  const { RPCLink } = optionalPeer<typeof import("@orpc/client/fetch")>("@orpc/client/fetch", "createGatewayClient");
  const link = new RPCLink<GatewayClientContext>({
    url: options.url,
    headers: async ({ context }) => {
      const base = typeof options.headers === "function" ? await options.headers() : (options.headers ?? {});
      return { ...base, ...traceHeaders(context?.trace) };
    },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch as any }),
  });
  return createORPCClient(link) as AgentGatewayClient;
}
