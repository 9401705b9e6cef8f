/**
 * Progress a handler reports from inside a call (spec/004 `std:progress`).
 *
 * The handler gets `progress(done, total?)` in its options (next to
 * `signal`); each report is checked by the core
 * (`pipeline::progress::check`: `done` strictly increases, `done ≤ total`,
 * a total is fixed once given). An accepted report goes to the frame's
 * `onProgress` listener (an adapter turns it into an MCP
 * `notifications/progress`, a gateway event, …); a rejected one is dropped
 * and `progress()` returns `false` — the call goes on (docs/decisions.md
 * "Progress").
 */
import { N } from "./native.js";
import { notify } from "./notify.js";

/** One accepted progress report. */
export interface ProgressEvent {
  done: number;
  /** The total, carried forward by the core once given. */
  total?: number;
}

export type ProgressListener = (event: ProgressEvent) => void;

/** The function a handler calls: `true` if the report was accepted. */
export type ReportProgress = (done: number, total?: number) => boolean;

/** Makes the `progress` function of one invocation (state: the last accepted report). */
export function progressReporter(listener: ProgressListener | undefined): ReportProgress {
  let lastDone: number | undefined;
  let lastTotal: number | undefined;
  return (done: number, total?: number): boolean => {
    if (typeof done !== "number" || (total !== undefined && typeof total !== "number")) return false;
    // The total in force (NaN: none), or a negative code: dropped.
    const r = N.progressCheck(lastDone, lastTotal, done, total);
    if (r < 0) return false;
    lastDone = done;
    lastTotal = Number.isNaN(r) ? undefined : r;
    if (listener !== undefined) notify(listener, lastTotal === undefined ? { done } : { done, total: lastTotal });
    return true;
  };
}

/** A progress event as deterministic CBOR content-part metadata (`std:progress`, `std:progress-total`). */
export function progressMetadataCbor(event: ProgressEvent): Uint8Array {
  return N.progressMetadataCbor(event.done, event.total);
}
