/**
 * The frozen views application hooks are handed (SI-3): a shallow frozen
 * copy of the application context, the frame a policy sees, and the info a
 * redactor gets. Shared by the driver loop, policy evaluation
 * (`policy-step.ts`) and the approval-input view (`approvals.ts`).
 */
import type { Actor, FrozenFrame, RedactionInfo } from "./types.js";

/** A frozen shallow copy of the application context for hooks (SI-3). */
export function frozenContext(context: unknown): unknown {
  return context !== null && typeof context === "object" ? Object.freeze({ ...context }) : context;
}

/** A frozen copy of an actor (its roles and attributes frozen too; none given: `{}`). */
function frozenActor(actor: Actor | undefined): Readonly<Actor> {
  const a = actor ?? {};
  return Object.freeze({
    ...a,
    roles: Object.freeze([...(a.roles ?? [])]) as string[],
    attributes: Object.freeze({ ...(a.attributes ?? {}) }),
  });
}

/**
 * The frame a policy sees, from the core's frozen frame (`raw`, as
 * `invokeFrame` gives it): what every binding's policies see, not the
 * app's own object (a field the core does not know, a getter, a change
 * made after the call started).
 */
export function frozenFrame(raw: any, context: unknown): FrozenFrame {
  return Object.freeze({
    surface: raw.surface,
    actor: frozenActor(raw.actor),
    context,
    trace: raw.trace === undefined ? undefined : Object.freeze({ ...raw.trace }),
    requestId: raw.requestId,
    agentId: raw.agentId,
    sessionId: raw.sessionId,
  });
}

export function redactionInfo(raw: any, context: unknown): RedactionInfo {
  return Object.freeze({
    surface: raw.surface,
    capabilityId: raw.capabilityId,
    actor: frozenActor(raw.actor),
    context,
  });
}
