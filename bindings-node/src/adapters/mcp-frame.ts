/**
 * The frame of one MCP tools/call: the app's frame factory, bounded, and
 * the request's own fields (`_meta`'s trace and progress token, the
 * transport's session). Apart from `mcp-call.ts` so the call's steps stay
 * whole there.
 */

import { boundedBy } from "../bounded-waits.js";
import { frameFields } from "../frame-crossing.js";
import { LONE_SURROGATE } from "../json.js";
import type { Frame } from "../types.js";
import type { McpRequestExtra } from "./mcp.js";
import type { AdapterFrame } from "./registry-port.js";

/**
 * An async frame factory's frame, or its failure, by the capability's
 * deadline and the request's signal (`boundedBy`, the driver's own bound):
 * a factory that never settles (an auth lookup that hangs) ends the call
 * INTERNAL (the operator is told why) instead of holding the tools/call
 * open for ever.
 */
export async function settledWithin<F extends AdapterFrame | undefined>(
  frame: Promise<F>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<F> {
  const b = await boundedBy(frame, Date.now() + timeoutMs, signal);
  if (b.settled === "value") return b.value;
  throw new Error(
    b.settled === "late"
      ? `the frame function did not settle within ${timeoutMs} ms`
      : "the frame function was still running when the request was cancelled",
  );
}

export function frameFor(extra: McpRequestExtra, app: AdapterFrame): Frame {
  // A misspelt field of the app's frame fails (INTERNAL, the operator told) rather than being left out.
  frameFields("registerMcpTools", "the frame function's frame", app);
  // One literal of fixed shape (not a spread of the app's object): this runs
  // on every tools/call, and a shape that varies with the app's frame costs
  // more than copying the known fields.
  const frame: Frame = {
    surface: "mcp",
    actor: app.actor,
    context: app.context,
    trace: app.trace,
    requestId: app.requestId,
    agentId: app.agentId,
    sessionId: app.sessionId ?? extra.sessionId,
    signal: app.signal === undefined ? extra.signal : AbortSignal.any([app.signal, extra.signal]),
    onProgress: app.onProgress,
  };
  if (frame.trace === undefined) {
    const traceparent = extra._meta?.traceparent;
    const tracestate = extra._meta?.tracestate;
    if (typeof traceparent === "string" && !LONE_SURROGATE.test(traceparent)) {
      // Validated (and dropped if invalid) by the core at stage 3; text with
      // no UTF-8 form is dropped here, as an invalid trace is (never the
      // caller's INVALID_INPUT: its arguments are fine).
      const state = typeof tracestate === "string" && !LONE_SURROGATE.test(tracestate) ? tracestate : undefined;
      frame.trace = state !== undefined ? { traceparent, tracestate: state } : { traceparent };
    }
  }
  const token = extra._meta?.progressToken;
  if (
    frame.onProgress === undefined &&
    (typeof token === "string" || typeof token === "number") &&
    extra.sendNotification
  ) {
    frame.onProgress = progressNotifier(extra, token);
  }
  return frame;
}

/**
 * Accepted progress reports (checked by the core) as MCP
 * `notifications/progress` for the client's `progressToken`. A failed send
 * is ignored: progress is advisory.
 */
function progressNotifier(extra: McpRequestExtra, progressToken: string | number): NonNullable<Frame["onProgress"]> {
  const send = extra.sendNotification!;
  return ({ done, total }) => {
    const params: Record<string, unknown> = { progressToken, progress: done };
    if (total !== undefined) params.total = total;
    send({ method: "notifications/progress", params }).catch(() => undefined);
  };
}
