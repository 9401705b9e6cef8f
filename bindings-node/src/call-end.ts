/**
 * How the driver loop's call ends when it does not return the handler's
 * output itself: the outcome the core ended the call with (`Done`), or,
 * when the loop fails on its own, the core's end of the abandoned call.
 * Apart from `driver.ts` so the loop stays the protocol's steps.
 */
import { CapabilityError, fromNative } from "./errors.js";
import { Outcome } from "./generated/protocol.js";
import { N } from "./native.js";
import { notify } from "./notify.js";
import { auditRecordFromRow } from "./audit.js";
import { parseCoreJson } from "./json.js";
import type { CallSpan } from "./telemetry.js";
import type { DriverHost } from "./driver-host.js";
import type { InvokeResult } from "./types.js";

/** The result of the core's outcome `o` (`invokeOutcome`); `output` the value the host holds. */
export function outcome(o: any, output: unknown): InvokeResult {
  switch (o.outcome) {
    case Outcome.OkHost:
      return { status: "ok", output };
    case Outcome.OkJson:
      return { status: "ok", output: o.output };
    case Outcome.ApprovalRequired:
      return { status: "approval_required", request: o.request };
    case Outcome.Error:
      throw CapabilityError.fromJSON(o.error);
    default:
      throw new CapabilityError("INTERNAL", "the invocation did not finish");
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
    if (host.audit !== undefined) notify(host.audit, auditRecordFromRow(row));
    if (telemetry !== null) span?.finish(telemetry);
  }
  const error = fromNative(e);
  span?.endWithError(error instanceof CapabilityError ? error.code : "INTERNAL");
  return error;
}
