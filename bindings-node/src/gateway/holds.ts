/**
 * A call the gateway runs up to its handler and holds there for its client
 * (`invokeHeld`, then `release`): how a remote AI SDK tool asks the core's
 * gate in `needsApproval` without running the call there, as the
 * in-process adapter does (`handler-hold.ts`). The client's word — run, or
 * not — comes in a second request, from the same caller; a held call
 * nobody releases ends at its deadline (TIMEOUT, audited, never started),
 * and `registry.close()` ends it too. Holds are found only by their
 * unguessable id and only by the caller who made them.
 */
import { randomUUID } from "node:crypto";

import { CapabilityError } from "../errors.js";
import { NOT_FOUND_MESSAGE } from "../generated/protocol.js";
import { invokeToHandler, type HandlerHold, type Settled } from "../handler-hold.js";
import type { CapabilityRegistry } from "../registry.js";
import type { Actor, Frame, InvokeResult } from "../types.js";

interface Held {
  owner: string;
  hold: HandlerHold;
  settled: Promise<Settled>;
  /** The held call's own signal: a release request that is aborted aborts the call it runs. */
  abort: AbortController;
}

/** How long a held call that ended unreleased keeps its outcome for a late `release` (its client's word). */
const ENDED_KEPT_MS = 60_000;

/** The calls one gateway holds, by hold id. */
export class GatewayHolds {
  readonly #held = new Map<string, Held>();

  /**
   * Runs the call up to its handler (`frame` as the gateway made it, its
   * signal replaced by the hold's own: the request that asked ends when the
   * call is held). `{holdId}` when it passed the gate and waits; else the
   * outcome it ended with (approval required, or an error: thrown).
   */
  async invoke(
    registry: CapabilityRegistry,
    capability: string,
    input: unknown,
    frame: Frame,
    actor: Actor,
  ): Promise<{ holdId: string; remainingMs: number } | { outcome: InvokeResult }> {
    const abort = new AbortController();
    const gated = await invokeToHandler((f) => registry.invoke(capability, input, f), {
      ...frame,
      signal: abort.signal,
    });
    if (gated.hold === undefined) {
      const ended = await gated.settled;
      if (!ended.ok) throw ended.error;
      return { outcome: ended.outcome };
    }
    const holdId = randomUUID();
    this.#held.set(holdId, { owner: ownerOf(actor), hold: gated.hold, settled: gated.settled, abort });
    // Ended without a release (its deadline, `registry.close()`): its
    // outcome stays a while for the release that comes late, then goes.
    void gated.settled.then(() => {
      setTimeout(() => this.#held.delete(holdId), ENDED_KEPT_MS).unref?.();
    });
    return { holdId, remainingMs: Math.max(0, gated.hold.deadlineAt - Date.now()) };
  }

  /**
   * The caller's word for its held call: `run` starts the handler, else the
   * call ends unrun (CANCELLED). The call's outcome — for a call that ended
   * unreleased (its deadline), that outcome (TIMEOUT); NOT_FOUND for a hold
   * id that is not this caller's, or was released already, as for one
   * that never was.
   */
  async release(holdId: string, run: boolean, actor: Actor, signal: AbortSignal | undefined): Promise<InvokeResult> {
    const held = this.#held.get(holdId);
    if (held === undefined || held.owner !== ownerOf(actor)) throw new CapabilityError("NOT_FOUND", NOT_FOUND_MESSAGE);
    this.#held.delete(holdId);
    const onAbort = () => held.abort.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      held.hold.release(run);
      const ended = await held.settled;
      if (!ended.ok) throw ended.error;
      return ended.outcome;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }
}

/** Who may release a hold: the same authenticated actor (its id; an actor without one, as a whole). */
function ownerOf(actor: Actor): string {
  if (typeof actor.id === "string" && actor.id !== "") return `id:${actor.id}`;
  try {
    return `actor:${JSON.stringify(actor)}`;
  } catch {
    return `unmatched:${randomUUID()}`; // no JSON form (a BigInt): nobody can release it, it ends at its deadline
  }
}
