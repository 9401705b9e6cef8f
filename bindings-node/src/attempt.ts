/**
 * Stage 11 for the driver loop: one attempt of a capability's handler —
 * the oRPC procedure's own middleware chain and handler (run by
 * `procedure-runner.ts`), raced against the deadline the core named and
 * the caller's signal (a failed attempt's answer: `attempt-failures.ts`).
 */
import type { AnyProcedure } from "@orpc/server";

import { progressReporter, type ProgressListener, type ReportProgress } from "./progress.js";
import { Answer, Kind } from "./generated/protocol.js";
import { HOT } from "./native.js";
import type { CapabilityHooks } from "./declare.js";
import type { Timed } from "./deadlines.js";
import type { DriverHost } from "./driver-host.js";
import { isEventIterator, runProcedure } from "./procedure-runner.js";
import { deadlineReason, failureAnswer, thrown } from "./attempt-failures.js";
import { isThenable } from "./bounded-waits.js";

/**
 * Stage 11: one attempt. One timer, armed at the deadline the core named;
 * the handler's signal aborts at it or when the caller's signal aborts;
 * whatever the handler delivers after that is discarded.
 */
export class Attempt implements Timed {
  output: unknown = undefined;
  deadline = 0;
  prevDeadline: Timed | null = null;
  nextDeadline: Timed | null = null;
  #settled = false;
  #controller: AbortController | undefined = undefined;
  #aborted = false;
  #reason: unknown = undefined;
  #resolve: ((next: number) => void) | undefined = undefined;
  #onCallerAbort: (() => void) | undefined = undefined;

  constructor(
    readonly host: DriverHost,
    readonly h: number,
    readonly callerSignal: AbortSignal | undefined,
  ) {}

  /** The frame's progress listener, and the invocation's reporter (kept across retries). */
  onProgress: ProgressListener | undefined = undefined;
  report: ReportProgress | undefined = undefined;
  /** Values a streaming handler yielded in this attempt. */
  #yielded = 0;
  /** The event iterator a streaming handler returned, while it runs. */
  #stream: AsyncIterator<unknown, unknown> | undefined = undefined;

  /** The handler's `progress(done, total?)`, made on first read (see progress.ts). */
  progress(): ReportProgress {
    this.report ??= progressReporter(this.onProgress);
    return this.report;
  }

  /** The handler's signal, made on first read. */
  signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#listenToCaller(); // a handler that watches its signal hears the caller at once
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  #abort(reason: unknown): void {
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    this.#stopStream();
  }

  /**
   * Asks a streaming handler's generator to stop: `return()` takes effect
   * at its next `yield` (its `finally` runs then); until then it runs on,
   * its signal aborted.
   */
  #stopStream(): void {
    const stream = this.#stream;
    this.#stream = undefined;
    if (stream?.return === undefined) return;
    try {
      Promise.resolve(stream.return(undefined)).catch(() => {});
    } catch {
      // A generator that throws while stopping has nothing more to say.
    }
  }

  /** Settles once; false if the timer or the caller got there first. */
  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.host.deadlines.remove(this);
    if (this.#onCallerAbort !== undefined) this.callerSignal?.removeEventListener("abort", this.#onCallerAbort);
    return true;
  }

  /**
   * Listens to the caller's abort signal from now on (once). Deferred to
   * the end of the turn (`afterTurn`) or the handler's first read of its
   * own signal: until then an abort is seen when the handler settles
   * (`ok`/`failed` check `aborted`), which gives the same answer as a
   * listener would, since an abort event is dispatched synchronously.
   */
  #listenToCaller(): void {
    const caller = this.callerSignal;
    if (caller === undefined || this.#onCallerAbort !== undefined || this.#settled) return;
    this.#onCallerAbort = () => this.cancelled();
    if (caller.aborted) {
      this.cancelled();
      return;
    }
    caller.addEventListener("abort", this.#onCallerAbort, { once: true });
  }

  afterTurn(): void {
    this.#listenToCaller();
  }

  run(hooks: CapabilityHooks, deadlineAt: number, input: unknown, context: unknown): Promise<number> {
    return new Promise<number>((resolve) => {
      this.#resolve = resolve;
      this.deadline = deadlineAt;
      this.host.deadlines.add(this);
      const caller = this.callerSignal;
      if (caller !== undefined) {
        if (caller.aborted) return this.cancelled();
        this.host.deadlines.watchTurn();
      }
      let p: unknown;
      try {
        p = runProcedure(hooks, input, context, this);
      } catch (e) {
        return thrown(this, hooks.procedure, e);
      }
      if (isThenable(p)) {
        p.then(
          (o) => this.#delivered(hooks.procedure, o),
          (e) => thrown(this, hooks.procedure, e),
        );
      } else {
        this.#delivered(hooks.procedure, p);
      }
    });
  }

  /** What the handler returned: an output, or a stream to consume. */
  #delivered(procedure: AnyProcedure, o: unknown): void {
    let stream: boolean;
    try {
      stream = isEventIterator(o);
    } catch (e) {
      thrown(this, procedure, e); // a getter of the handler's value threw
      return;
    }
    if (stream) void this.#consume(procedure, o as AsyncIterator<unknown, unknown>);
    else this.ok(o);
  }

  /**
   * A streaming handler (an oRPC event iterator): each value it yields is
   * a progress report (`done` = values this attempt yielded, checked by
   * the core like any report, so after a retry the count is dropped until
   * it passes the furthest report; no payload leaves before validation
   * and redaction), and its output is the value it returns, else the last
   * it yielded. The deadline and the caller's abort stop the generator
   * (its signal aborts at once; `return()` ends it at its next `yield`).
   */
  async #consume(procedure: AnyProcedure, stream: AsyncIterator<unknown, unknown>): Promise<void> {
    this.#stream = stream;
    if (this.#settled) {
      // The deadline or the caller ended the attempt before the handler
      // handed over its iterator: it never starts.
      this.#stopStream();
      return;
    }
    let last: unknown;
    try {
      for (;;) {
        const step = await stream.next();
        if (this.#settled) {
          this.#stopStream(); // the deadline or the caller ended the attempt first
          return;
        }
        if (step.done === true) {
          this.#stream = undefined;
          this.ok(step.value === undefined ? last : step.value);
          return;
        }
        last = step.value;
        this.#yielded += 1;
        this.progress()(this.#yielded);
      }
    } catch (e) {
      this.#stream = undefined;
      thrown(this, procedure, e);
    }
  }

  ok(output: unknown): void {
    if (this.callerSignal?.aborted) {
      this.cancelled();
      return;
    }
    if (!this.#settle()) return;
    this.output = output;
    let next: number;
    try {
      next = HOT.answer(this.host.handle, this.h, Answer.HandlerOk, Date.now());
    } catch {
      next = Kind.Done; // the registry was closed under the call: the loop reads INTERNAL
    }
    this.#resolve!(next);
  }

  failed(err: unknown): void {
    if (this.callerSignal?.aborted) {
      this.cancelled();
      return;
    }
    if (!this.#settle()) return;
    this.#answer(0, err);
  }

  /** The deadline passed (called by the registry's `Deadlines`). */
  expire(): void {
    // The caller aborted first (in a turn whose end has not come yet, so no
    // listener heard it): CANCELLED, as an eager listener would have said.
    if (this.callerSignal?.aborted) {
      this.cancelled();
      return;
    }
    if (!this.#settle()) return;
    this.#abort(deadlineReason());
    this.#answer(1, undefined);
  }

  cancelled(): void {
    if (!this.#settle()) return;
    this.#abort(this.callerSignal?.reason);
    this.#answer(2, undefined);
  }

  /** 0: the handler failed with `err`; 1: timed out; 2: cancelled. */
  #answer(how: 0 | 1 | 2, err: unknown): void {
    this.#resolve!(failureAnswer(this.host, this.h, how, err));
  }
}
