/**
 * Stage 5's host policies for the driver loop: a runtime or capability
 * policy function called with its frozen request, raced (when it returns a
 * promise) against the core's policy timeout and the caller's
 * cancellation, and its decision checked field by field before it crosses.
 * Apart from `driver.ts`, whose `EvaluatePolicy` step calls it.
 */
import { Answer, DECISION_CODE as DECISION_CODES } from "./generated/protocol.js";
import { N } from "./native.js";
import { CANCELLED, isThenable, whenAborted } from "./bounded-waits.js";
import { frozenContext, frozenFrame } from "./frozen-views.js";
import { parseCoreJson } from "./json.js";
import { logFailure } from "./log.js";
import type { CapabilityHooks } from "./declare.js";
import type { DriverHost } from "./driver-host.js";
import type { Frame, PolicyDecision } from "./types.js";

/** The core's decision codes by name (a Map: own entries only, so no `constructor`). */
const DECISION_CODE: ReadonlyMap<string, number> = new Map(Object.entries(DECISION_CODES));

/** A decision field as given: absent (null) or of its type; else the `BAD` marker. */
const BAD = Symbol("not a decision field");
function field(v: unknown, type: "string" | "number"): unknown {
  return v === undefined || v === null ? null : typeof v === type ? v : BAD;
}

export async function evaluatePolicy(
  host: DriverHost,
  hooks: CapabilityHooks,
  h: number,
  aux: number,
  input: unknown,
  frame: Frame,
  signal: AbortSignal | undefined,
): Promise<number> {
  const reg = host.handle;
  const scope = aux % 2;
  const index = (aux - scope) / 2;
  const fn = scope === 0 ? host.runtimePolicies.get(index) : hooks.policies.get(index);
  if (fn === undefined) return N.answer(reg, h, Answer.PolicyFailed, Date.now());
  const timeoutMs = N.invokePolicyTimeout(reg, h);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const cancel = whenAborted(signal);
  try {
    // The frozen context copy reads the app's context: a getter that throws
    // fails the policy (deny), as a policy that throws does. The frame is
    // the core's (stage 3), as every binding's policies see it.
    const context = frozenContext(frame.context);
    const request = Object.freeze({
      capability: Object.freeze({ id: hooks.id, meta: hooks.meta }),
      input,
      frame: frozenFrame(parseCoreJson(N.invokeFrame(reg, h)), context),
      context,
    });
    let d: PolicyDecision | Promise<PolicyDecision> = fn(request);
    if (isThenable(d)) {
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("policy timed out")), timeoutMs);
      });
      const got = await Promise.race([d, timedOut, cancel.aborted]);
      // The caller cancelled first: the core ends the call (CANCELLED).
      if (got === CANCELLED) return N.answer(reg, h, Answer.Cancelled, Date.now());
      d = got;
    }
    const x = d as any;
    const code =
      d && typeof d === "object" && typeof x.decision === "string" ? DECISION_CODE.get(x.decision) : undefined;
    // A decision with a field of the wrong type is no decision (a failed
    // policy, which denies), never one with a default in that field's place;
    // a number the core will not accept as an expiry is the core's to refuse.
    const fields = [field(x?.reason, "string"), field(x?.approvalType, "string"), field(x?.expiresInMs, "number")];
    if (code === undefined || fields.includes(BAD)) return N.answer(reg, h, Answer.PolicyFailed, Date.now());
    const [reason, approvalType, expiresInMs] = fields as [string | null, string | null, number | null];
    return N.answerPolicy(reg, h, code, reason, approvalType, expiresInMs, Date.now());
  } catch (e) {
    logFailure(host, h, `a policy (${scope === 0 ? "runtime" : "capability"} #${index})`, e);
    return N.answer(reg, h, Answer.PolicyFailed, Date.now());
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    cancel.dispose();
  }
}
