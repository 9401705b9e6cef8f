/**
 * What operators are told when application code fails: a handler, a host
 * policy, a validator or a redactor threw. The model and the caller never
 * get this text (the core's answer carries none of it); the registry's
 * `logger` option (default `console`) does, with the real error.
 */
import type { DriverHost } from "./driver-host.js";
import { N } from "./native.js";

/**
 * The class of a thrown value as an operator knows it (`TypeError`, a
 * subclass's own name, `string` for a thrown string): what the audit
 * record's `failure` names. Never its message. A hostile getter or proxy
 * gives `Error`.
 */
export function errorClass(error: unknown): string {
  try {
    if (typeof error !== "object" || error === null) return typeof error;
    const name: unknown = (error as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === "string" && name !== "" ? name : "Object";
  } catch {
    return "Error";
  }
}

/** Logs `error` for the capability of invocation `h`; a logger that throws is ignored. */
export function logFailure(host: DriverHost, h: number, what: string, error: unknown): void {
  if (host.logger === undefined) return;
  try {
    const id = host.caps[N.invokeCapability(host.handle, h)]?.id ?? "?";
    host.logger.warn(
      `orpc-agent: ${what} of capability "${id}" failed; the caller was only told that it failed`,
      error,
    );
  } catch {
    // the operator's logger is not the call's business
  }
}
