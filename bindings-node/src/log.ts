/**
 * What operators are told when application code fails: a handler, a host
 * policy, a validator or a redactor threw. The model and the caller never
 * get this text (the core's answer carries none of it); the registry's
 * `logger` option (default `console`) does, with the real error.
 */
import type { DriverHost } from "./driver.js";
import { N } from "./native.js";

/** Logs `error` for the capability of invocation `h`; a logger that throws is ignored. */
export function logFailure(host: DriverHost, h: number, what: string, error: unknown): void {
  if (host.logger === undefined) return;
  try {
    const id = host.caps[N.invokeCapability(host.handle, h)]?.id ?? "?";
    host.logger.warn(`orpc-agent: ${what} of capability "${id}" failed; the caller was only told that it failed`, error);
  } catch {
    // the operator's logger is not the call's business
  }
}
