/**
 * oRPC's own HTTP handlers and `CapabilityError` (issue 20 item 1). The
 * same router can be served governed (oRPC Agent's registry) and by oRPC's
 * `RPCHandler`/`OpenAPIHandler`; the latter's clients read `ORPCError`s.
 * Which oRPC code a core code becomes is the core's
 * (`orpc_agent_core::orpc_error::orpc_code_of`); this converts.
 */
import { ORPCError } from "@orpc/server";

import { CapabilityError } from "./errors.js";
import { N } from "./native.js";

/**
 * An oRPC middleware for oRPC's own handlers (`RPCHandler`,
 * `OpenAPIHandler`, `call`): a `CapabilityError` the handler throws reaches
 * their clients as the `ORPCError` the core names for its code
 * (`INVALID_INPUT` → `BAD_REQUEST`, `POLICY_DENIED` → `FORBIDDEN`, …), with
 * its message and details as `data`, instead of a 500. `agentProcedure`
 * bases have it first; add it with `.use(capabilityErrorsToORPC)` to a
 * procedure built otherwise. A governed call skips it.
 */
export async function capabilityErrorsToORPC(options: { next: () => Promise<any> }): Promise<any> {
  try {
    return await options.next();
  } catch (e) {
    if (!(e instanceof CapabilityError)) throw e;
    const { code, status } = JSON.parse(N.orpcErrorOf(e.code, e.retryable)) as { code: string; status: number };
    throw new ORPCError(code, { status, message: e.message, data: e.details, cause: e });
  }
}
