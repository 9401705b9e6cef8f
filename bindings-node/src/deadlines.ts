/**
 * Deadline timers for a registry's running handler attempts.
 *
 * Each attempt's deadline is the one the core named (`deadline_at_ms`);
 * nothing here computes a deadline. Instead of one `setTimeout` per
 * attempt (~0.3–0.8 µs to arm and clear, the largest single cost of a
 * governed call), attempts wait in a list sorted by deadline and ONE timer
 * is armed at the earliest. An attempt that settles unlinks itself in O(1);
 * the timer is re-armed only when a new deadline is earlier than the armed
 * one, or when it fires. When no attempt waits at the end of an event-loop
 * turn, the timer is unref'd so it never keeps the process alive (checked
 * once per turn, not per call: sequential calls empty and refill the list
 * every time, and toggling the timer's ref costs a libuv call each way). At the deadline the attempt's `expire()`
 * aborts its handler's signal and answers `HandlerTimedOut` (SI-9).
 *
 * The same list serves a second, cheaper watch: `afterTurn()` is called
 * once, at the end of the event-loop turn in which the entry was added, on
 * every entry still waiting (one `setImmediate` for all of them). An
 * attempt uses it to listen to its caller's abort signal only when its
 * handler outlives the turn — most settle within it, and adding a listener
 * to a fresh AbortSignal costs more than the rest of a governed call.
 */

export interface Timed {
  /** Unix ms, from the core. */
  readonly deadline: number;
  prevDeadline: Timed | null;
  nextDeadline: Timed | null;
  /** The deadline passed: abort and answer; called once. */
  expire(): void;
  /** Still waiting at the end of the turn it was added in (see `watchTurn`). */
  afterTurn(): void;
}

export class Deadlines {
  #head: Timed | null = null;
  #tail: Timed | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;
  #armedAt = Infinity;
  readonly #fire = (): void => this.#onTimer();
  /** Whether the armed timer keeps the process alive. */
  #refd = false;
  #turnWatched = false;
  readonly #endOfTurn = (): void => {
    this.#turnWatched = false;
    for (let t = this.#head; t !== null; ) {
      const next = t.nextDeadline; // afterTurn may settle and unlink t
      t.afterTurn();
      t = next;
    }
    if (this.#head === null && this.#refd) {
      this.#timer?.unref();
      this.#refd = false;
    }
  };

  /**
   * At the end of this turn: calls `afterTurn()` on every waiting entry,
   * and unrefs the timer if nothing waits any more.
   */
  watchTurn(): void {
    if (this.#turnWatched) return;
    this.#turnWatched = true;
    setImmediate(this.#endOfTurn);
  }

  add(t: Timed): void {
    const wasEmpty = this.#head === null;
    // Usually appended: equal timeouts give increasing deadlines.
    let after = this.#tail;
    while (after !== null && after.deadline > t.deadline) after = after.prevDeadline;
    t.prevDeadline = after;
    t.nextDeadline = after === null ? this.#head : after.nextDeadline;
    if (t.nextDeadline !== null) t.nextDeadline.prevDeadline = t;
    else this.#tail = t;
    if (after !== null) after.nextDeadline = t;
    else this.#head = t;
    if (t.deadline < this.#armedAt) this.#arm(t.deadline);
    else if (wasEmpty && !this.#refd && this.#timer !== undefined) {
      this.#timer.ref();
      this.#refd = true;
    }
  }

  remove(t: Timed): void {
    const { prevDeadline: p, nextDeadline: n } = t;
    if (p !== null) p.nextDeadline = n;
    else if (this.#head === t) this.#head = n;
    else return; // not linked
    if (n !== null) n.prevDeadline = p;
    else this.#tail = p;
    t.prevDeadline = t.nextDeadline = null;
    if (this.#head === null && this.#refd) this.watchTurn();
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#armedAt = at;
    this.#timer = setTimeout(this.#fire, Math.max(0, at - Date.now()));
    this.#refd = true;
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.#refd = false;
    this.#armedAt = Infinity;
    const now = Date.now();
    while (this.#head !== null && this.#head.deadline <= now) {
      const t = this.#head;
      this.remove(t);
      t.expire();
    }
    if (this.#head !== null) this.#arm(this.#head.deadline);
  }
}
