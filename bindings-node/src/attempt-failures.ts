/**
 * What an attempt (`attempt.ts`) that did not deliver an output comes to:
 * a handler's throw (an `ORPCError` checked against the procedure's
 * declared errors first, as oRPC's `call` does), the deadline or the
 * caller's cancellation, each answered to the core, with what only the
 * operator's log may be told. Apart from the `Attempt` class, which settles
 * once and hands its failures here.
 */
import { ORPCError, validateORPCError, type AnyProcedure } from "@orpc/server";

import { CapabilityError } from "./errors.js";
import { optionalJsonText } from "./json.js";
import { Answer, Kind } from "./generated/protocol.js";
import { N } from "./native.js";
import type { DriverHost } from "./driver-host.js";
import type { Attempt } from "./attempt.js";
import { errorClass, logFailure } from "./log.js";

/** Why a handler's signal aborted at the deadline. */
export function deadlineReason(): Error {
  const e = new Error("The capability's deadline passed.");
  e.name = "TimeoutError";
  return e;
}

/**
 * The handler threw. An `ORPCError` first goes through oRPC's own
 * `validateORPCError` against the procedure's `.errors({...})`, as
 * oRPC's `call` does: that decides `defined` (a declared code whose
 * status and data match), which the core reads.
 */
export function thrown(attempt: Attempt, procedure: AnyProcedure, err: unknown): void {
  if (!(err instanceof ORPCError)) {
    attempt.failed(err);
    return;
  }
  validateORPCError(procedure["~orpc"].errorMap, err).then(
    (e) => attempt.failed(e),
    // The data's validator threw: not shown as declared.
    () => attempt.failed(new ORPCError(err.code, { status: err.status, message: err.message, cause: err })),
  );
}

/**
 * The answer `Attempt.#answer` resolves with. `how` 0: the handler failed
 * with `err`; 1: timed out; 2: cancelled.
 */
export function failureAnswer(host: DriverHost, h: number, how: 0 | 1 | 2, err: unknown): number {
  const reg = host.handle;
  let next: number;
  try {
    // The operator's log gets what the caller was not shown: not a
    // CapabilityError or a declared oRPC error (the procedure's own outcomes).
    if (how === 0 && !(err instanceof CapabilityError) && !(err instanceof ORPCError && err.defined === true))
      logFailure(host, h, "the handler", err);
    next =
      how === 0
        ? answerError(reg, h, err)
        : how === 1
          ? N.answer(reg, h, Answer.HandlerTimedOut, Date.now())
          : N.answer(reg, h, Answer.Cancelled, Date.now());
  } catch {
    // Its fields could not be read: the operator gets it, the caller a plain failure.
    if (err instanceof CapabilityError) logFailure(host, h, "the handler", err);
    next = plainFailure(reg, h, err);
  }
  return next;
}

/**
 * A thrown error the core could not read (a `CapabilityError` whose fields
 * were changed to what it cannot hold) is a plain failure: EXECUTION_FAILED,
 * its finished record delivered. Only a closed registry leaves the loop
 * to read INTERNAL.
 */
function plainFailure(reg: number, h: number, err: unknown): number {
  try {
    return N.answerHandlerError(reg, h, null, errorClass(err), false, null, Date.now());
  } catch {
    return Kind.Done; // the registry was closed under the call: the loop reads INTERNAL
  }
}

function answerError(reg: number, h: number, err: unknown): number {
  if (err instanceof CapabilityError) {
    return N.answerHandlerError(
      reg,
      h,
      err.code,
      err.message,
      err.retryable,
      optionalJsonText(err.details),
      Date.now(),
    );
  }
  if (err instanceof ORPCError) {
    // Its fields only: the core's table (core/src/orpc_error.rs) decides
    // the code, whether it is retryable and whether the message is shown.
    const status = Number.isInteger(err.status) && err.status >= 0 ? err.status : undefined;
    const message = typeof err.message === "string" ? err.message : "";
    const thrown = {
      code: String(err.code),
      status,
      defined: err.defined === true,
      message,
      data: optionalJsonText(err.data),
    };
    return N.answerHandlerOrpcError(reg, h, thrown, Date.now());
  }
  // A plain throw: EXECUTION_FAILED with the core's generic message. Only
  // the error's class is passed on, for the operator's audit record; the
  // thrown text may quote data (SI-10) and goes to the logger instead.
  return N.answerHandlerError(reg, h, null, errorClass(err), false, null, Date.now());
}
