// Compile-time check (tsc -p tsconfig.test.json, part of `make lint-node`):
// the public types of the records the core sends hold to the wire schema
// (`schema/wire.schema.json`, as types in `wire.generated.ts`). For each:
// every value the schema admits is a value of the public type, and the two
// name the same fields — no field the core never sends, none it sends left
// out.
import type {
  Actor,
  ApprovalPage,
  ApprovalRequest,
  AuditRecord,
  Frame,
  PolicyAuditRecord,
  RedactionInfo,
  TraceContext,
} from "@orpc-agent/core";

import type {
  WireActor,
  WireApprovalPage,
  WireApprovalRequest,
  WireAuditRecord,
  WireFrame,
  WirePolicyRecord,
  WireRedactionInfo,
  WireTraceContext,
} from "./wire.generated.js";

type Assignable<A, B> = [A] extends [B] ? true : false;
type SameKeys<A, B> = [keyof A] extends [keyof B] ? ([keyof B] extends [keyof A] ? true : false) : false;
/** `Public` admits every `Wire` value and names the same fields. */
type HoldsTo<Public, Wire> = Assignable<Wire, Public> extends true ? SameKeys<Public, Wire> : false;

export const checks: [
  HoldsTo<ApprovalRequest, WireApprovalRequest>,
  HoldsTo<ApprovalPage, WireApprovalPage>,
  HoldsTo<AuditRecord, WireAuditRecord>,
  HoldsTo<PolicyAuditRecord, WirePolicyRecord>,
  HoldsTo<TraceContext, WireTraceContext>,
  HoldsTo<Actor, WireActor>,
  // What a redactor is told, besides the app's own context (never sent).
  HoldsTo<Omit<RedactionInfo, "context">, WireRedactionInfo>,
  // A frame, besides what stays in the process (context, signal, progress sink).
  HoldsTo<Omit<Frame, "context" | "signal" | "onProgress">, WireFrame>,
] = [true, true, true, true, true, true, true, true];
