/**
 * The frozen views application hooks are handed (SI-3): a shallow frozen
 * copy of the application context, the frame a policy sees, and the info a
 * redactor gets. Shared by the driver loop, policy evaluation
 * (`policy-step.ts`) and the approval-input view (`approvals.ts`).
 */
import type { Frame, FrozenFrame, RedactionInfo } from "./types.js";

/** A frozen shallow copy of the application context for hooks (SI-3). */
export function frozenContext(context: unknown): unknown {
  return context !== null && typeof context === "object" ? Object.freeze({ ...context }) : context;
}

export function frozenFrame(frame: Frame, context: unknown): FrozenFrame {
  const actor = frame.actor ?? {};
  return Object.freeze({
    surface: frame.surface,
    actor: Object.freeze({
      ...actor,
      roles: Object.freeze([...(actor.roles ?? [])]) as string[],
      attributes: Object.freeze({ ...(actor.attributes ?? {}) }),
    }),
    context,
    trace: frame.trace,
    requestId: frame.requestId,
    agentId: frame.agentId,
    sessionId: frame.sessionId,
  });
}

export function redactionInfo(raw: any, context: unknown): RedactionInfo {
  const actor = raw.actor ?? {};
  return Object.freeze({
    surface: raw.surface,
    capabilityId: raw.capabilityId,
    actor: Object.freeze({
      ...actor,
      roles: Object.freeze([...(actor.roles ?? [])]) as string[],
      attributes: Object.freeze({ ...(actor.attributes ?? {}) }),
    }),
    context,
  });
}
