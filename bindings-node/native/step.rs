//! Reading the step an invocation is at, and how it ended: what the
//! façade needs beyond the packed step number (`invoke.rs`).

use napi_derive::napi;
use orpc_agent_core::ffi;
use orpc_agent_core::{CapabilityError, Invocation, Outcome, Payload, Step};
use serde_json::{Value, json};

use crate::errors::{internal, throw};
use crate::invoke::ms;
use crate::js_json::{js_text, js_text_if};
use crate::registry::{registry_call, with_registry};

fn read<T>(reg: u32, h: u32, f: impl FnOnce(&Invocation) -> T) -> napi::Result<T> {
    registry_call(reg, |r| {
        r.invocations
            .get(h)
            .map(f)
            .ok_or_else(|| internal("no such invocation"))
    })
}

/// The `aux` number of the current step (for the first step, whose
/// packed result carries the handle instead).
#[napi(catch_unwind)]
pub fn invoke_aux(reg: u32, h: u32) -> napi::Result<f64> {
    read(reg, h, |inv| ffi::step_aux(inv, inv.step_kind()) as f64)
}

/// The step invocation `h` is at, the time told first (`ffi` `advance`:
/// `Invocation::at`). A host that waited before acting on `RunHandler` (an
/// agent adapter that holds a gated call until its framework executes it)
/// asks this before it starts the handler: one whose deadline passed
/// meanwhile is not started but timed out, by the core.
#[napi(catch_unwind)]
pub fn invoke_at(reg: u32, h: u32, now: f64) -> napi::Result<f64> {
    registry_call(reg, |r| crate::invoke::next(r, h, ms(now)))
}

/// The instant (unix ms) every hook of the call is bounded by
/// (`Invocation::call_deadline_ms`).
#[napi(catch_unwind)]
pub fn invoke_call_deadline(reg: u32, h: u32) -> napi::Result<f64> {
    read(reg, h, |inv| inv.call_deadline_ms() as f64)
}

/// `RunHandler`: the attempt number (1-based).
#[napi(catch_unwind)]
pub fn invoke_attempt(reg: u32, h: u32) -> napi::Result<u32> {
    read(reg, h, Invocation::attempt)
}

/// `EvaluatePolicy`: how long the host policy may run (ms).
#[napi(catch_unwind)]
pub fn invoke_policy_timeout(reg: u32, h: u32) -> napi::Result<f64> {
    read(reg, h, |inv| inv.policy_timeout_ms() as f64)
}

/// The value the current step shows, when the core holds it as JSON
/// (`ffi::step_json`; the façade reads it at `RunHandler`: a resumed call's
/// stored input); `None` when the host holds it.
#[napi(catch_unwind)]
pub fn invoke_input_json(reg: u32, h: u32) -> napi::Result<Option<String>> {
    read(reg, h, |inv| ffi::step_json(inv).map(js_text))
}

/// `AskRetryOn`: the error as text for `parseCoreJson` (its `details`
/// keep integers past 2^53 exact).
#[napi(catch_unwind)]
pub fn invoke_retry_error(reg: u32, h: u32) -> napi::Result<String> {
    read(reg, h, |inv| match inv.step() {
        Step::AskRetryOn { error } => js_text(&error.to_json()),
        _ => Value::Null.to_string(),
    })
}

/// `RedactOutput` (and any later step): `{surface, capabilityId, actor}`
/// from the frozen frame — on resume, the recorded one (SI-3) — as text
/// for `parseCoreJson` (the actor's attributes keep integers past 2^53).
#[napi(catch_unwind)]
pub fn invoke_redaction_info(reg: u32, h: u32) -> napi::Result<String> {
    read(reg, h, |inv| {
        serde_json::to_value(inv.redaction_info()).map_or_else(|_| "null".into(), |v| js_text(&v))
    })
}

/// The invocation's frame as the core froze it at stage 3 (trace and ids
/// as it read them, the actor's known fields only), as text for
/// `parseCoreJson`: the frame a host policy sees, in every binding (SI-3).
#[napi(catch_unwind)]
pub fn invoke_frame(reg: u32, h: u32) -> napi::Result<String> {
    read(reg, h, |inv| {
        serde_json::to_value(inv.frame()).map_or_else(|_| "null".into(), |v| js_text(&v))
    })
}

/// `Audit`: the record as a row, a JSON array in `AuditRecord::FIELDS`
/// order (`AuditRow`); the façade builds the object with a fixed shape,
/// which costs V8 less than half of parsing the object.
#[napi(catch_unwind)]
pub fn invoke_audit_row(reg: u32, h: u32) -> napi::Result<String> {
    audit_row_in(reg, h).map_err(|e| throw(&e))
}

/// [`invoke_audit_row`] without the napi glue (the raw hot path's).
pub fn audit_row_in(reg: u32, h: u32) -> Result<String, CapabilityError> {
    with_registry(reg, |r| {
        let inv = r
            .invocations
            .get(h)
            .ok_or_else(|| internal("no such invocation"))?;
        Ok(match inv.step() {
            Step::Audit(record) => js_text_if(&record.row(), record.output.as_ref()),
            _ => "null".into(),
        })
    })
}

/// The audit record's keys in row order, and those left out when absent:
/// `{fields, omittedWhenAbsent}` (the façade's drift test).
#[napi]
pub fn audit_record_fields() -> String {
    use orpc_agent_core::pipeline::AuditRecord;
    json!({"fields": AuditRecord::FIELDS, "omittedWhenAbsent": AuditRecord::OMITTED_WHEN_ABSENT})
        .to_string()
}

/// Takes the outcome of a finished invocation and frees its slot:
/// `{outcome, output?, request?, error?}`, `outcome` the core's
/// `ffi::outcome_code` (`Outcome` in the generated protocol file):
/// `output` when the core holds it, `request` when an approval is
/// required, `error` for an error.
#[napi(catch_unwind)]
pub fn invoke_outcome(reg: u32, h: u32) -> napi::Result<String> {
    registry_call(reg, |r| {
        let mut inv = r
            .invocations
            .remove(h)
            .ok_or_else(|| internal("no such invocation"))?;
        let code = ffi::outcome_code(&inv);
        let outcome = inv
            .take_outcome()
            .unwrap_or_else(|| Outcome::Error(internal("the invocation has not finished")));
        let v = match outcome {
            Outcome::Ok(Payload::Host) => json!({"outcome": code}),
            Outcome::Ok(Payload::Json(v)) => json!({"outcome": code, "output": v}),
            Outcome::ApprovalRequired(req) => json!({"outcome": code, "request": req}),
            // Not finished: the core's ERROR code with the error made above.
            Outcome::Error(e) => json!({"outcome": ffi::outcome_code::ERROR, "error": e.to_json()}),
        };
        Ok(js_text(&v))
    })
}

/// Ends and frees an invocation the host gave up on (its driver threw):
/// the core's `Invocation::abandon` (INTERNAL, unless its outcome was
/// settled), and the finished audit record it still owes, for the façade
/// to deliver: `{row, telemetry}` as text for `parseCoreJson`, the record
/// as a row ([`invoke_audit_row`]'s form) and its telemetry view as JSON
/// text (what `Span.finish` takes), or null.
#[napi(catch_unwind)]
pub fn invoke_abandon(reg: u32, h: u32, now: f64) -> Option<String> {
    crate::registry::with_registry(reg, |r| {
        let Some(mut inv) = r.invocations.remove(h) else {
            return Ok(None);
        };
        // The core says whether a finished record is newly owed: one
        // pending when the host gave up was handed out already.
        if !inv.abandon(ms(now)) {
            return Ok(None);
        }
        r.route.record(&inv);
        if !r.route.to_host {
            return Ok(None);
        }
        Ok(match inv.step() {
            Step::Audit(record) => Some(js_text_if(
                &json!({
                    "row": record.row(),
                    // Its own text, as `Span.finish` takes it.
                    "telemetry": orpc_agent_core::telemetry::call_telemetry(record)
                        .and_then(|view| serde_json::to_string(&view).ok()),
                }),
                record.output.as_ref(),
            )),
            _ => None,
        })
    })
    .unwrap_or(None)
}

/// The index of the capability the invocation resolved, or -1 (not yet
/// resolved, or unknown): the façade's key to its hook table.
#[napi(catch_unwind)]
pub fn invoke_capability(reg: u32, h: u32) -> napi::Result<i32> {
    read(reg, h, |inv| {
        inv.capability()
            .and_then(|c| i32::try_from(c.index).ok())
            .unwrap_or(-1)
    })
}
