/**
 * How a capability error leaves the gateway: as an `ORPCError` the client
 * can read (status from the core's error kind, `{code, kind, retryable}`
 * as data; `wire.ts`). Apart from `server.ts` because the router's
 * procedures and its caller checks (`callers.ts`) both use it.
 */
import { ORPCError } from "@orpc/server";

import { CapabilityError } from "../errors.js";
import { statusOf } from "./wire.js";

/** Runs `f`, turning a `CapabilityError` into an `ORPCError` the client can read. */
export async function guard<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (error) {
    throw toOrpc(error);
  }
}

export function toOrpc(error: unknown): unknown {
  if (!(error instanceof CapabilityError)) return error;
  return new ORPCError(error.code, {
    status: statusOf(error),
    message: error.message,
    data: { code: error.code, kind: error.kind, retryable: error.retryable },
  });
}
