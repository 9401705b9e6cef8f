/**
 * What travels between an agent gateway and its clients: request and
 * response shapes, and the mapping of `CapabilityError` onto `ORPCError`
 * (code kept, HTTP status from the core's error kind, `{code, kind,
 * retryable}` as data) and back.
 */
import { CapabilityError, type CapabilityErrorCode } from "../errors.js";
import type { ApprovalRequest, CapabilityDescriptor, ExposureSurface } from "../types.js";

/** Body of `invoke`. Anything else in the body (a `surface`, an `actor`) is ignored (SI-2). */
export interface GatewayInvokeInput {
  /** A capability id or its tool name on the gateway's surface. */
  capability: string;
  input?: unknown;
}

/** An approval request as the gateway shows it: the input through `redactApprovalInput`. */
export type GatewayApprovalView = Omit<ApprovalRequest, "input"> & { input: unknown };

export type GatewayInvokeOutput =
  | { status: "ok"; output: unknown }
  | { status: "approval_required"; request: GatewayApprovalView };

/**
 * `invokeHeld`'s answer: the call passed the gate and waits before its
 * handler for `release` (at most `remainingMs`, then it ends in TIMEOUT);
 * or its outcome.
 */
export type GatewayHeldOutput = { status: "held"; holdId: string; remainingMs: number } | GatewayInvokeOutput;

/** Body of `release`: the hold `invokeHeld` answered, and whether to run the call. */
export interface GatewayReleaseInput {
  holdId: string;
  run: boolean;
}

/** Events of `invokeStream`: progress reports, then the outcome. */
export type GatewayStreamEvent =
  | { type: "progress"; done: number; total?: number; metadata: string }
  | ({ type: "result" } & GatewayInvokeOutput);

export type GatewayDescriptorsOutput =
  | { format: "json"; surface: ExposureSurface; descriptors: CapabilityDescriptor[] }
  /** `data`: base64 of a CBOR array of descriptors with their `std:` metadata map. */
  | { format: "cbor"; surface: ExposureSurface; contentType: "application/cbor"; data: string };

export interface GatewayDescriptorsInput {
  format?: "json" | "cbor";
}

export interface GatewayDecideInput {
  id: string;
  approve: boolean;
  reason?: string;
}

export interface GatewayListInput {
  status?: ApprovalRequest["status"];
  capabilityId?: string;
  limit?: number;
}

/** `data` of an `ORPCError` that carries a capability error. */
export interface GatewayErrorData {
  code: string;
  kind: string;
  retryable: boolean;
}

/** HTTP status by the core's `std:` error kind (transport mapping only). */
const STATUS_BY_KIND: Record<string, number> = {
  "std:not-found": 404,
  "std:invalid-args": 400,
  "std:capability-denied": 403,
  "std:timeout": 504,
  "std:session-not-found": 404,
  "std:credential-required": 401,
  "std:internal": 500,
};

export function statusOf(error: CapabilityError): number {
  return STATUS_BY_KIND[error.kind] ?? 500;
}

/** A remote error back as a `CapabilityError` when it carries one, else `undefined`. */
export function capabilityErrorOf(error: unknown): CapabilityError | undefined {
  if (error instanceof CapabilityError) return error;
  const e = error as { code?: unknown; message?: unknown; data?: Partial<GatewayErrorData> } | null;
  const data = e?.data;
  if (data && typeof data.code === "string" && data.code === e?.code) {
    try {
      return new CapabilityError(data.code as CapabilityErrorCode, String(e?.message ?? data.code), {
        retryable: data.retryable === true,
        cause: error,
      });
    } catch {
      return undefined; // a code this build does not know
    }
  }
  return undefined;
}
