/**
 * Application callbacks whose failure changes nothing of the call: an
 * audit subscriber, a progress listener.
 */
import { isThenable } from "./bounded-waits.js";

const ignore = (): void => undefined;

/**
 * Calls `callback(value)`. A throw is ignored, and so is the rejection of
 * an async callback's promise: never an unhandled rejection, which ends
 * the process under Node's default (`--unhandled-rejections=throw`).
 */
export function notify<T>(callback: (value: T) => unknown, value: T): void {
  try {
    const r = callback(value);
    if (isThenable(r)) r.then(undefined, ignore);
  } catch {
    // A subscriber's or listener's failure does not change the call.
  }
}
