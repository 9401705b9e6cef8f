/** Small constructors for policy decisions. */
import type { PolicyDecision } from "./types.js";

export const allow = (): PolicyDecision => ({ decision: "allow" });
export const abstain = (): PolicyDecision => ({ decision: "abstain" });
export const deny = (reason?: string): PolicyDecision =>
  reason === undefined ? { decision: "deny" } : { decision: "deny", reason };
export const requireApproval = (
  options: { type?: string; reason?: string; expiresInMs?: number } = {},
): PolicyDecision => ({
  decision: "requireApproval",
  ...(options.type !== undefined ? { approvalType: options.type } : {}),
  ...(options.reason !== undefined ? { reason: options.reason } : {}),
  ...(options.expiresInMs !== undefined ? { expiresInMs: options.expiresInMs } : {}),
});
