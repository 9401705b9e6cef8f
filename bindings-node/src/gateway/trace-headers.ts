/**
 * The W3C trace context of a gateway request's headers, read by the core
 * (`act::trace::from_http_headers`), and the headers a client sends for
 * one. Apart from `server.ts` because the client (`client.ts`) writes
 * them too, and the router's frame (`callers.ts`) reads them.
 */
import { N } from "../native.js";
import type { TraceContext } from "../types.js";

/** Request headers in any of the forms Node servers and fetch handlers give them. */
export type HeadersLike =
  | Headers
  | Record<string, string | string[] | undefined>
  | readonly string[] /* Node's `rawHeaders` */;

export function defaultHeaders(context: any): HeadersLike | undefined {
  return context?.headers ?? context?.req?.rawHeaders ?? context?.request?.headers;
}

/** The trace context of the request headers, validated by the core (invalid → none). */
export function traceOf(headers: HeadersLike | undefined): TraceContext | undefined {
  if (headers === undefined || headers === null) return undefined;
  const pairs: string[] = [];
  if (Array.isArray(headers)) {
    pairs.push(...(headers as readonly string[]));
  } else if (typeof (headers as Headers).forEach === "function" && typeof (headers as Headers).get === "function") {
    (headers as Headers).forEach((value, name) => {
      pairs.push(name, value);
    });
  } else {
    for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
      if (typeof value === "string") pairs.push(name, value);
      else if (Array.isArray(value)) for (const v of value) pairs.push(name, v);
    }
  }
  const json = N.traceFromHttpHeaders(pairs.map(String));
  return json == null ? undefined : (JSON.parse(json) as TraceContext);
}

/** The headers to send for a trace context (for clients of a gateway). */
export function traceHeaders(trace: TraceContext | undefined): Record<string, string> {
  if (trace === undefined) return {};
  const flat = N.traceToHttpHeaders(trace.traceparent, trace.tracestate ?? null);
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}
