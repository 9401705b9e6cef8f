/**
 * The driver loop: runs one invocation of the core's state machine.
 *
 * Each native call is synchronous and returns the next step as one number
 * (`kind + 16 × aux`, see `native/invoke.rs`); this loop performs the step —
 * validate with the procedure's schema, call a host policy, run the
 * procedure's middlewares and handler, sleep, redact, deliver an audit
 * record — and answers. Node awaits the handler's promise; Rust never does.
 * Every decision (order, eligibility, deadlines, what may leak) is the
 * core's: nothing here decides whether a step happens, only how to do it.
 */
import { CapabilityError } from "./errors.js";
import { Answer, Kind } from "./generated/protocol.js";
import { HOT, N } from "./native.js";
import { auditRecordFromRow } from "./audit.js";
import { Attempt } from "./attempt.js";
import { notify } from "./notify.js";
import type { ReportProgress } from "./progress.js";
import { exportInputText, optionalJsonText, parseCoreJson } from "./json.js";
import { storeStep } from "./stores.js";
import { logFailure } from "./log.js";
import type { CallSpan } from "./telemetry.js";
import { issuesJson, type StandardResult } from "./schema.js";
import type { CapabilityHooks } from "./declare.js";
import { hooksOf, type DriverHost } from "./driver-host.js";
import { hookAnswer, isThenable, sleep, unsettled, type Missed } from "./bounded-waits.js";
import { frozenContext, redactionInfo } from "./frozen-views.js";
import { evaluatePolicy } from "./policy-step.js";
import { takeHold } from "./handler-hold.js";
import { abandon, outcome } from "./call-end.js";
import type { Frame, InvokeResult } from "./types.js";

/**
 * One governed invocation. `start` is the packed result of
 * `invokeStart`/`invokeStartName`/`resumeStart`; `input` the caller's raw
 * input (`undefined` on resume: the core holds the stored input).
 */
export async function drive(
  host: DriverHost,
  start: number,
  capIndex: number | undefined,
  input: unknown,
  frame: Frame,
  span?: CallSpan,
): Promise<InvokeResult> {
  const reg = host.handle;
  let kind = start % 16;
  const h = (start - kind) / 16;
  let aux = 0;
  let r = 0;
  let value = input;
  let output: unknown;
  let fromCore = capIndex === undefined;
  let report: ReportProgress | undefined;
  let hooks: CapabilityHooks | undefined = capIndex === undefined ? undefined : host.caps[capIndex];
  let context: unknown;
  let signal: AbortSignal | undefined;

  try {
    // Read inside the try: a getter of the app's frame that throws ends the
    // invocation like any other failure (INTERNAL, its text not shown).
    // A fresh `{}` when the caller gives none, as oRPC's `call()` does.
    context = frame.context ?? {};
    signal = frame.signal;
    if (kind === Kind.RunHandler || kind === Kind.EvaluatePolicy) aux = N.invokeAux(reg, h);
    for (;;) {
      switch (kind) {
        case Kind.ValidateInput: {
          let res: StandardResult | undefined;
          let missed: Missed | undefined;
          let refusal: string | undefined;
          hooks ??= hooksOf(host, h); // outside the try: its failure is the call's (INTERNAL), not the input's
          try {
            let b = hookAnswer(
              hooks.inputSchema!["~standard"].validate(value) as StandardResult | Promise<StandardResult>,
              reg,
              h,
              signal,
            );
            if (isThenable(b)) b = await b;
            if (b.settled === "value") res = b.value;
            else missed = b;
          } catch (e) {
            res = undefined;
            if (e instanceof CapabilityError)
              refusal = e.message; // the app's own words
            else logFailure(host, h, "the input validator", e); // its text may quote the input
          }
          if (missed) {
            r = unsettled(missed, reg, h);
          } else if (refusal !== undefined) {
            r = N.answer(reg, h, Answer.InputInvalid, Date.now(), refusal);
          } else if (typeof res !== "object" || res === null) {
            r = N.answer(reg, h, Answer.InputValidatorFailed, Date.now()); // threw, or no Standard Schema result
          } else if (res.issues) {
            const issues = issuesJson(res.issues); // null: malformed, a failed validator
            const code = issues === null ? Answer.InputValidatorFailed : Answer.InputIssues;
            r = N.answer(reg, h, code, Date.now(), issues);
          } else {
            value = res.value;
            r = HOT.answer(reg, h, Answer.InputValid, Date.now());
          }
          break;
        }
        case Kind.EvaluatePolicy:
          hooks ??= hooksOf(host, h);
          r = await evaluatePolicy(host, hooks, h, aux, value, frame, signal);
          break;
        case Kind.ExportInput:
          try {
            const { text, rebuilds } = exportInputText(value);
            r = N.answer(reg, h, Answer.InputExported, Date.now(), text, rebuilds);
          } catch (e) {
            // The core quotes the reason to the caller: only the library's
            // own (or the app's CapabilityError) says why; an exception of
            // application code (a throwing `toJSON` or getter) may quote data.
            r = N.answer(
              reg,
              h,
              Answer.InputNotExportable,
              Date.now(),
              e instanceof CapabilityError ? e.message : null,
            );
          }
          break;
        case Kind.RunHandler: {
          const hold = takeHold(frame); // an adapter's gate: the call waits for its framework (handler-hold.ts)
          if (hold !== undefined) {
            r = await hold.step(host, h, aux, signal);
            break;
          }
          if (fromCore) {
            // A resumed call: the handler gets the stored validated input.
            const text = N.invokeInputJson(reg, h);
            value = text == null ? undefined : parseCoreJson(text);
            fromCore = false;
          }
          const attempt = new Attempt(host, h, signal);
          attempt.onProgress = frame.onProgress;
          attempt.report = report;
          hooks ??= hooksOf(host, h);
          r = await attempt.run(hooks, aux, value, context);
          report = attempt.report;
          output = attempt.output;
          break;
        }
        case Kind.AskRetryOn: {
          const error = CapabilityError.fromJSON(parseCoreJson(N.invokeRetryError(reg, h)));
          let retry = false;
          try {
            hooks ??= hooksOf(host, h);
            retry = hooks.meta.retry?.retryOn?.(error) === true;
          } catch {
            retry = false; // a throwing predicate does not retry
          }
          r = N.answer(reg, h, Answer.RetryOn, Date.now(), null, retry);
          break;
        }
        case Kind.Sleep: {
          const aborted = await sleep(aux, signal);
          r = aborted ? N.answer(reg, h, Answer.Cancelled, Date.now()) : N.answer(reg, h, Answer.Slept, Date.now());
          break;
        }
        case Kind.ValidateOutput: {
          let res: StandardResult = { issues: [{ message: "late" }] };
          let missed: Missed | undefined;
          try {
            hooks ??= hooksOf(host, h);
            let b = hookAnswer(
              hooks.outputSchema!["~standard"].validate(output) as StandardResult | Promise<StandardResult>,
              reg,
              h,
              signal,
            );
            if (isThenable(b)) b = await b;
            if (b.settled === "value") res = b.value;
            else missed = b;
          } catch (e) {
            res = { issues: [{ message: "the output validator threw" }] };
            logFailure(host, h, "the output validator", e);
          }
          if (missed) {
            output = undefined; // the unvalidated value goes nowhere
            r = unsettled(missed, reg, h);
          } else if (res.issues) {
            output = undefined;
            r = N.answer(reg, h, Answer.OutputInvalid, Date.now());
          } else {
            output = res.value;
            r = N.answer(reg, h, Answer.OutputValid, Date.now());
          }
          break;
        }
        case Kind.RedactOutput: {
          const raw = parseCoreJson(N.invokeRedactionInfo(reg, h));
          try {
            // The frozen context copy reads the app context's getters: one
            // that throws fails the redactor, like a redactor that throws.
            const info = redactionInfo(raw, frozenContext(context));
            hooks ??= hooksOf(host, h);
            let b = hookAnswer(hooks.meta.redact!.output!(output, info), reg, h, signal);
            if (isThenable(b)) b = await b;
            if (b.settled === "value") {
              output = b.value;
              r = N.answer(reg, h, Answer.Redacted, Date.now());
            } else {
              output = undefined; // the unredacted value goes nowhere (SI-10)
              r = unsettled(b, reg, h);
            }
          } catch (e) {
            output = undefined; // the unredacted value goes nowhere (SI-10)
            logFailure(host, h, "the output redactor", e);
            r = N.answer(reg, h, Answer.RedactorFailed, Date.now());
          }
          break;
        }
        case Kind.ExportOutput:
          r = N.answer(reg, h, Answer.OutputExported, Date.now(), optionalJsonText(output) ?? "null");
          break;
        case Kind.Audit: {
          if (host.audit !== undefined) {
            notify(host.audit, auditRecordFromRow(parseCoreJson(HOT.auditRow(reg, h))));
          }
          if (span !== undefined) {
            const view = N.invokeTelemetry(reg, h);
            if (view !== null) span.finish(view);
          }
          r = HOT.answer(reg, h, Answer.Audited, Date.now());
          break;
        }
        case Kind.DoneOkHost:
          return { status: "ok", output };
        case Kind.Done:
          return outcome(parseCoreJson(N.invokeOutcome(reg, h)), output);
        case Kind.PersistApproval:
        case Kind.ConsumeApproval:
          // Only a store that waits (PostgreSQL) hands its steps back here:
          // the one asynchronous crossing, settled on this thread.
          r = await storeStep(reg, h);
          break;
        default:
          throw new CapabilityError("INTERNAL", `step ${kind} cannot be performed by this registry`);
      }
      kind = r % 16;
      aux = (r - kind) / 16;
    }
  } catch (e) {
    throw abandon(host, reg, h, e, span);
  }
}
