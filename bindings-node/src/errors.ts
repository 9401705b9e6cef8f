/**
 * Typed errors. Codes, kinds and default retryability come from the core
 * (`errorCodeTable()`), never from a list written here.
 */
import { isArgumentError } from "./arguments.js";
import { N } from "./native.js";

import { type CapabilityErrorCode, INTERNAL_MESSAGE } from "./generated/protocol.js";

/** Every error code of the core (`NOT_FOUND`, `POLICY_DENIED`, …), generated from its list. */
export type { CapabilityErrorCode };

const TABLE: Record<string, { kind: string; retryable: boolean }> = JSON.parse(N.errorCodeTable());

/** The core's error codes, in its stable order. */
export const ERROR_CODES: readonly string[] = Object.freeze(N.allErrorCodes());

export interface CapabilityErrorJson {
  code: string;
  message: string;
  retryable: boolean;
  kind: string;
  details?: unknown;
}

/**
 * The error an invocation ends in, and the error a handler throws to keep
 * its own code (a plain `Error` becomes EXECUTION_FAILED with a generic
 * message: its text may quote data and never reaches the caller).
 */
export class CapabilityError extends Error {
  override readonly name = "CapabilityError";
  readonly code: CapabilityErrorCode;
  /** The `std:` error kind of the code (`std:not-found`, …). */
  readonly kind: string;
  readonly retryable: boolean;
  readonly details: unknown;

  constructor(
    code: CapabilityErrorCode,
    message: string,
    options: { retryable?: boolean; details?: unknown; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const row = TABLE[code];
    if (row === undefined) throw new TypeError(`unknown capability error code ${JSON.stringify(code)}`);
    if (typeof message !== "string")
      throw new TypeError(`a CapabilityError's message is a string, not ${typeof message}`);
    if (options.retryable !== undefined && typeof options.retryable !== "boolean") {
      throw new TypeError(`a CapabilityError's retryable is true or false, not ${typeof options.retryable}`);
    }
    this.code = code;
    this.kind = row.kind;
    this.retryable = options.retryable ?? row.retryable;
    this.details = options.details;
  }

  /** From the core's JSON form (kind as the core reported it). */
  static fromJSON(j: CapabilityErrorJson): CapabilityError {
    const e = new CapabilityError(j.code as CapabilityErrorCode, j.message, {
      retryable: j.retryable,
      details: j.details,
    });
    (e as { kind: string }).kind = j.kind;
    return e;
  }

  toJSON(): CapabilityErrorJson {
    const j: CapabilityErrorJson = {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      kind: this.kind,
    };
    if (this.details !== undefined) j.details = this.details;
    return j;
  }
}

/** One problem found while building a registry. */
export interface RegistryProblem {
  /** `null` for runtime options. */
  capability: string | null;
  /** Dotted field path, `""` for the capability itself. */
  path: string;
  code: string;
  message: string;
}

/** The registry failed to build: every problem at once (SI-4). */
export class RegistryValidationError extends Error {
  override readonly name = "RegistryValidationError";
  readonly problems: readonly RegistryProblem[];
  constructor(message: string, problems: RegistryProblem[]) {
    super(message);
    this.problems = Object.freeze(problems.map((p) => Object.freeze({ ...p })));
  }
}

/** The message of an INTERNAL error whose own text is not shown (the core's words). */
export { INTERNAL_MESSAGE };

/**
 * Maps an error thrown by the native module: `{"error": …}` becomes a
 * CapabilityError, `{"problems": …}` a RegistryValidationError; the
 * library's own argument TypeErrors pass as they are. Anything else — a
 * conversion napi refused (its message quotes the value), a caught Rust
 * panic, or an exception of application code met on the way (a getter of
 * the frame or context) — is INTERNAL with a fixed message and no cause:
 * its text may quote data, and a rejection may be shown to a model.
 */
export function fromNative(e: unknown): Error {
  if (e instanceof CapabilityError || e instanceof RegistryValidationError || isArgumentError(e)) return e;
  const text = e instanceof Error ? e.message : typeof e === "string" ? e : "";
  if (text.startsWith("{")) {
    try {
      const j = JSON.parse(text);
      if (j?.error) return CapabilityError.fromJSON(j.error);
      if (j && Array.isArray(j.problems)) return new RegistryValidationError(j.message, j.problems);
    } catch {
      // not ours: fall through
    }
  }
  return new CapabilityError("INTERNAL", INTERNAL_MESSAGE);
}

/** Runs a native call, mapping what it throws. */
export function call<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw fromNative(e);
  }
}
