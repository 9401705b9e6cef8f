/**
 * The driver loop's waits on the host's side, none of which may hold a
 * call for ever: whether a hook answered with a promise at all
 * (`isThenable`), a hook's promise raced against the call's deadline and
 * the caller's cancellation (`hookAnswer`, `unsettled`), the caller's abort
 * as a promise (`whenAborted`, which a policy is raced against too), and
 * the retry back-off's `sleep`. Apart from `driver.ts`, which awaits them.
 */
import { Answer } from "./generated/protocol.js";
import { N } from "./native.js";

export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && typeof v === "object" && typeof (v as any).then === "function";
}

/**
 * What a hook's promise came to, or what came first: the call's deadline
 * (`late`) or the caller's cancellation (`cancelled`).
 */
type Bounded<T> = { settled: "value"; value: T } | { settled: "late" } | { settled: "cancelled" };

/** A hook that did not settle in time or was cancelled. */
export type Missed = { settled: "late" | "cancelled" };

export const CANCELLED = Symbol("cancelled by the caller");

/**
 * A promise that settles with `CANCELLED` when the caller's signal aborts
 * (never, without a signal), and its listener's removal.
 */
export function whenAborted(signal: AbortSignal | undefined): { aborted: Promise<typeof CANCELLED>; dispose(): void } {
  if (signal === undefined) return { aborted: new Promise(() => {}), dispose() {} };
  if (signal.aborted) return { aborted: Promise.resolve(CANCELLED), dispose() {} };
  let onAbort: () => void = () => {};
  const aborted = new Promise<typeof CANCELLED>((resolve) => {
    onAbort = () => resolve(CANCELLED);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return { aborted, dispose: () => signal.removeEventListener("abort", onAbort) };
}

/**
 * Awaits a host promise until `deadlineAtMs` (unix ms, `Date.now()`'s clock)
 * or the caller's cancellation: a hook that never settles must not hold a
 * call, an approval view or an MCP request. A promise already settled wins
 * a tie; one that rejects after losing is still handled (never an
 * unhandled rejection). The wait is at most `setTimeout`'s range
 * (2^31 − 1 ms: past it the timer would fire at once).
 */
export async function boundedBy<T>(
  p: T | PromiseLike<T>,
  deadlineAtMs: number,
  signal: AbortSignal | undefined,
): Promise<Bounded<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Bounded<T>>((resolve) => {
    timer = setTimeout(
      () => resolve({ settled: "late" }),
      Math.min(Math.max(0, deadlineAtMs - Date.now()), 2 ** 31 - 1),
    );
  });
  const cancel = whenAborted(signal);
  try {
    return await Promise.race([
      Promise.resolve(p).then((value) => ({ settled: "value" as const, value })),
      late,
      cancel.aborted.then(() => ({ settled: "cancelled" as const })),
    ]);
  } finally {
    clearTimeout(timer);
    cancel.dispose();
  }
}

/**
 * A hook's answer as `bounded` reports it: at once for a value (no extra
 * turn of the event loop on the hot path), bounded by the call's deadline
 * and the caller's cancellation for a promise.
 */
export function hookAnswer<T>(
  got: T | PromiseLike<T>,
  reg: number,
  h: number,
  signal: AbortSignal | undefined,
): Bounded<T> | Promise<Bounded<T>> {
  // Bounded by the call's deadline (the core's `callDeadline`); the core
  // decides what a late or cancelled hook means (`unsettled`).
  return isThenable(got) ? boundedBy(got, N.invokeCallDeadline(reg, h), signal) : { settled: "value", value: got as T };
}

/** The answer for a hook that did not settle in time or was cancelled. */
export function unsettled(b: Missed, reg: number, h: number): number {
  return b.settled === "late"
    ? N.answer(reg, h, Answer.DeadlinePassed, Date.now())
    : N.answer(reg, h, Answer.Cancelled, Date.now());
}

/** Waits `ms` or until `signal` aborts; true if it aborted. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(true);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(false);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
