/**
 * How the driver loop's call ends when it does not return the handler's
 * output itself: the outcome the core ended the call with (`Done`), or,
 * when the loop fails on its own, the core's end of the abandoned call.
 * Apart from `driver.ts` so the loop stays the protocol's steps.
 */
import { CapabilityError, fromNative } from "./errors.js";
import { N } from "./native.js";
import { auditRecordFromRow } from "./audit.js";
import { parseCoreJson } from "./json.js";
import type { CallSpan } from "./telemetry.js";
import type { DriverHost } from "./driver-host.js";
import type { InvokeResult } from "./types.js";

export function outcome(o: any, output: unknown): InvokeResult {
  switch (o.status) {
    case "ok":
      return { status: "ok", output: "output" in o ? o.output : output };
    case "approval_required":
      return { status: "approval_required", request: o.request };
    default:
      throw CapabilityError.fromJSON(o.error);
  }
}

/**
 * Ends a call the loop could not finish (it threw `e`) and returns the
 * error the call rejects with.
 */
export function abandon(host: DriverHost, reg: number, h: number, e: unknown, span: CallSpan | undefined): unknown {
  // The core ends the call (INTERNAL) and hands over the finished record
  // it still owes, so every call that started is audited as finished.
  const owed = N.invokeAbandon(reg, h, Date.now());
  if (owed !== null) {
    const { row, telemetry } = parseCoreJson(owed);
    try {
      host.audit?.(auditRecordFromRow(row));
    } catch {
      // A subscriber's failure does not change the call's outcome.
    }
    if (telemetry !== null) span?.finish(telemetry);
  }
  const error = fromNative(e);
  span?.endWithError(error instanceof CapabilityError ? error.code : "INTERNAL");
  return error;
}
