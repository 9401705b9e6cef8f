/**
 * The progress of a streaming AI SDK tool call: what is kept of it, and
 * the preliminary results `execute` streams
 * to `ai` (see "Progress" in `ai-sdk.ts`). Apart from `ai-sdk.ts` so the
 * streaming stays in one place.
 */

import { N } from "../native.js";

/**
 * A call's progress as reported so far: only the latest report is kept (a
 * preliminary result is a snapshot, so a stream that outruns `ai` costs no
 * memory), a count to tell a new one, and who waits for the next.
 */
export interface Running {
  latest: { done: number; total?: number } | undefined;
  reports: number;
  /** The call passed the gate and streams: `execute` returns an async iterable. */
  streaming: boolean;
  wake: (() => void) | undefined;
}

/**
 * What `ai` streams for a call that reports progress: the core's
 * preliminary result for each new report, then the output (the last value
 * is the tool's result; an error is thrown from here).
 */
export function preliminaryResults(running: Running, output: Promise<unknown>): AsyncGenerator<unknown> {
  // Watched from now, not from the first `next()`: an error the iterable's
  // consumer never asks for is not an unhandled rejection.
  const state = { finished: false };
  const finish = () => {
    state.finished = true;
    running.wake?.();
  };
  output.then(finish, finish);
  return streamPreliminary(running, output, state);
}

async function* streamPreliminary(
  running: Running,
  output: Promise<unknown>,
  state: { finished: boolean },
): AsyncGenerator<unknown> {
  let shown = 0;
  for (;;) {
    if (running.reports > shown && running.latest !== undefined) {
      shown = running.reports;
      yield JSON.parse(N.agentToolPreliminaryResult(running.latest.done, running.latest.total ?? null));
      continue;
    }
    if (state.finished) break;
    await new Promise<void>((resolve) => {
      running.wake = resolve;
    });
    running.wake = undefined;
  }
  yield await output;
}
