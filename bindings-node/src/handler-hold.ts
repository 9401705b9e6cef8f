/**
 * A gated call held before its handler: how an agent adapter asks the core's
 * gate (policies, approval) in a framework's approval hook without running
 * the call there. `ai` asks `needsApproval` of every call of a step and then
 * executes them only if the step may run tools (finish reason `stop` or
 * `tool-calls`); a handler run in the hook would have done its work for a
 * call nobody reads, which the model may then make again.
 *
 * The adapter starts the invocation with a hold for its frame
 * (`invokeToHandler`); the driver, at the call's first `RunHandler` step,
 * says the call passed the gate (`reached`) and waits for the adapter:
 * `release(true)` when the framework executes the call, `release(false)` when
 * it will not (a later call under the same id). The call's abort signal ends
 * the wait (CANCELLED), and so does its deadline: the core is asked the step
 * again with the time (`invokeAt`), so a handler is never started past its
 * deadline and a call nobody executes ends in TIMEOUT then, audited; only
 * `release(true)` starts the handler.
 */

import { getEventIteratorSchemaDetails } from "@orpc/contract";

import type { CapabilityHooks } from "./declare.js";
import { hooksOf, type DriverHost } from "./driver-host.js";
import { Answer, Kind } from "./generated/protocol.js";
import { N } from "./native.js";
import type { Frame, InvokeResult } from "./types.js";

export class HandlerHold {
  /** Resolves `"held"` once the call passed the gate and waits before its handler. */
  readonly reached: Promise<"held">;
  /** Whether the held capability streams (an event-iterator output or an async generator handler). */
  streams = false;
  /** The held call's deadline (unix ms), once it waits: it ends there unreleased. */
  deadlineAt = 0;
  #reached!: () => void;
  #go: ((run: boolean) => void) | undefined;
  #decided: boolean | undefined;

  constructor() {
    this.reached = new Promise((resolve) => {
      this.#reached = () => resolve("held");
    });
  }

  /** The adapter's word: run the handler (`true`) or end the call unrun (`false`). The first word counts. */
  release(run: boolean): void {
    if (this.#decided !== undefined) return;
    this.#decided = run;
    this.#go?.(run);
  }

  /**
   * For a registry port whose call is held elsewhere (an agent gateway,
   * `gateway/holds.ts`): says the call passed the gate and resolves with
   * the adapter's word (`true`: run it). An abort of `signal` is a no, and
   * so is no word `askAfterMs` after the hold (past the holder's deadline).
   */
  heldElsewhere(signal: AbortSignal | undefined, askAfterMs: number): Promise<boolean> {
    this.#reached();
    if (signal?.aborted === true) this.release(false);
    if (this.#decided !== undefined) return Promise.resolve(this.#decided);
    return new Promise((resolve) => {
      const onAbort = () => this.release(false);
      signal?.addEventListener("abort", onAbort, { once: true });
      // Past the holder's deadline the call has ended there: a no, which
      // asks the holder what became of it (its TIMEOUT), so nothing waits
      // for an `execute` that never comes. Unref'd: the holder keeps time.
      const timer = setTimeout(onAbort, Math.min(Math.max(0, askAfterMs), 2 ** 31 - 1));
      timer.unref?.();
      this.#go = (run) => {
        this.#go = undefined;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(run);
      };
    });
  }

  /**
   * The driver's `RunHandler` step of a held call (invocation `h` of
   * `host`, deadline `deadlineAt`): waits for the adapter's word and
   * returns the core's next step (packed). Run: the core is asked the step
   * again with the time (it times out a call past its deadline). No, or
   * `signal` aborted: CANCELLED. At the deadline the core is asked too, and
   * only its answer ends the wait: a timer that fires before the core's
   * clock says so (an early timer, a delay past `setTimeout`'s range, a
   * clock stepped back) waits on, so only the adapter's word starts the
   * handler. The timer keeps the process alive, as a running handler's
   * does: the call ends, audited, before the process can.
   */
  async step(host: DriverHost, h: number, deadlineAt: number, signal: AbortSignal | undefined): Promise<number> {
    this.streams = streams(hooksOf(host, h));
    this.deadlineAt = deadlineAt;
    this.#reached();
    const reg = host.handle;
    const held = waiting.get(reg) ?? waiting.set(reg, new Set()).get(reg)!;
    held.add(this);
    try {
      for (;;) {
        const word = await this.#wait(deadlineAt, signal);
        if (word === "stop") return N.answer(reg, h, Answer.Cancelled, Date.now());
        const next = N.invokeAt(reg, h, Date.now());
        if (word === "run" || next % 16 !== Kind.RunHandler) return next;
      }
    } finally {
      held.delete(this);
      if (held.size === 0) waiting.delete(reg);
    }
  }

  #wait(deadlineAt: number, signal: AbortSignal | undefined): Promise<"run" | "stop" | "deadline"> {
    if (this.#decided !== undefined) return Promise.resolve(this.#decided ? "run" : "stop");
    if (signal?.aborted === true) return Promise.resolve("stop");
    return new Promise((resolve) => {
      // A millisecond past it, within `setTimeout`'s range (2^31 − 1 ms).
      const delay = Math.min(Math.max(1, deadlineAt - Date.now() + 1), 2 ** 31 - 1);
      const timer = setTimeout(() => settle("deadline"), delay);
      const onAbort = () => this.release(false);
      signal?.addEventListener("abort", onAbort, { once: true });
      const settle = (word: "run" | "stop" | "deadline") => {
        this.#go = undefined;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        resolve(word);
      };
      this.#go = (run) => settle(run ? "run" : "stop");
    });
  }
}

/** A call's outcome, settled: never a rejected promise left in a map. */
export type Settled = { ok: true; outcome: InvokeResult } | { ok: false; error: unknown };

/**
 * Runs `invoke(frame)` up to its handler: `hold` is set once the call
 * passed the gate (the adapter releases it when its framework executes the
 * call, and `settled` is then its outcome); without it, the call ended
 * before its handler (approval required, refused) and `settled` is how.
 */
export async function invokeToHandler(
  invoke: (frame: Frame) => Promise<InvokeResult>,
  frame: Frame,
): Promise<{ hold: HandlerHold | undefined; settled: Promise<Settled> }> {
  const hold = new HandlerHold();
  holds.set(frame, hold);
  const settled = invoke(frame).then(
    (outcome): Settled => ({ ok: true, outcome }),
    (error: unknown): Settled => ({ ok: false, error }),
  );
  const passed = (await Promise.race([settled, hold.reached])) === "held";
  return { hold: passed ? hold : undefined, settled };
}

const holds = new WeakMap<Frame, HandlerHold>();

/** The calls held now, by registry handle: `registry.close()` ends them (their timers keep the process alive). */
const waiting = new Map<number, Set<HandlerHold>>();

/** Ends every call held in registry `handle`, unrun (the registry is closing). */
export function releaseHolds(handle: number): void {
  for (const hold of waiting.get(handle) ?? []) hold.release(false);
}

/** The hold registered for `frame`, taken (a retry's attempt is not held again). */
export function takeHold(frame: Frame): HandlerHold | undefined {
  const hold = holds.get(frame);
  if (hold !== undefined) holds.delete(frame);
  return hold;
}

function streams(hooks: CapabilityHooks): boolean {
  const def = (hooks.procedure as { "~orpc"?: { outputSchema?: unknown; handler?: unknown } })["~orpc"];
  if (def === undefined) return false;
  if (getEventIteratorSchemaDetails(def.outputSchema as never) !== undefined) return true;
  return Object.prototype.toString.call(def.handler) === "[object AsyncGeneratorFunction]";
}
