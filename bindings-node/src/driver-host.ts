/**
 * What the driver loop needs of its registry (`DriverHost`, which
 * `CapabilityRegistry` implements), and the hooks of the capability a call
 * resolved. A module of its own so the modules the loop calls (the
 * attempt, policy evaluation, logging) name their host without importing
 * the loop.
 */
import { CapabilityError } from "./errors.js";
import { N } from "./native.js";
import type { CapabilityHooks } from "./declare.js";
import type { Deadlines } from "./deadlines.js";
import type { AuditRecord, PolicyFunction } from "./types.js";

/** What the loop needs of its registry. */
export interface DriverHost {
  readonly handle: number;
  readonly caps: readonly CapabilityHooks[];
  readonly runtimePolicies: ReadonlyMap<number, PolicyFunction>;
  readonly audit: ((record: AuditRecord) => void) | undefined;
  readonly deadlines: Deadlines;
  readonly logger: { warn(message: string, error: unknown): void } | undefined;
}

/** The hooks of the capability an invocation resolved (name path, resume). */
export function hooksOf(host: DriverHost, h: number): CapabilityHooks {
  const hooks = host.caps[N.invokeCapability(host.handle, h)];
  if (hooks === undefined) throw new CapabilityError("INTERNAL", "no capability for this step");
  return hooks;
}
