/**
 * The frozen views application hooks are handed (SI-3): a shallow frozen
 * copy of the application context, the frame a policy sees, and the info a
 * redactor gets. Shared by the driver loop, policy evaluation
 * (`policy-step.ts`) and the approval-input view (`approvals.ts`).
 */
import type { Actor, Frame, FrozenFrame, RedactionInfo } from "./types.js";

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

export function frozenFrame(frame: Frame, context: unknown): FrozenFrame {
  return Object.freeze({
    surface: frame.surface,
    actor: frozenActor(frame.actor),
    context,
    trace: frame.trace,
    requestId: frame.requestId,
    agentId: frame.agentId,
    sessionId: frame.sessionId,
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
