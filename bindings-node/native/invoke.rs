//! The hot path: starting invocations and answering their steps.
//!
//! Every function here returns the **next step** as one number:
//! `kind + 16 × aux`, where `kind` is the core's `StepKind` (1–13) or
//! [`DONE_OK_HOST`] (`ffi::reported_kind`), and `aux` is the one value the
//! host needs for that step (`ffi::step_aux`: a deadline, a wait, a
//! policy's place), so it needs no second crossing.
//!
//! [`invoke_start`] returns `kind + 16 × handle` instead: the handle of the
//! invocation in its registry's slab (read the deadline with
//! [`invoke_aux`] when the first step needs its aux number).
//!
//! Store steps (persist, consume an approval) never reach JavaScript: the
//! memory and SQLite stores complete synchronously inside the call
//! (`BindingRegistry::advance`).

use std::sync::Arc;

use napi_derive::napi;
use orpc_agent_core::ffi;
use orpc_agent_core::{
    Actor, Answer, CapabilityError, Frame, Invocation, InvokeOptions, Outcome, Payload, Step,
    Surface,
};
use serde_json::{Value, json};

use crate::errors::{internal, invalid, throw};
use crate::js_json::js_text;
use crate::registry::{Registry, registry_call, with_registry};

/// The invocation ended successfully and its output is the host's own
/// value (`Payload::Host`): the slot is already freed, the host returns the
/// value it holds. Saves the outcome crossing on the hot path.
pub const DONE_OK_HOST: u32 = orpc_agent_core::ffi::sentinel::DONE_OK_HOST as u32;

fn pack(kind: u32, aux: u64) -> f64 {
    // aux ≤ 2^48 (a unix-ms deadline is ~2^41): exact in an f64.
    f64::from(kind) + 16.0 * (aux as f64)
}

pub(crate) fn ms(now: f64) -> u64 {
    if now.is_finite() && now > 0.0 {
        now as u64
    } else {
        0
    }
}

/// Runs the store steps, then reports the next host step
/// (`ffi::reported_kind`, `ffi::step_aux`); frees the slot when the call
/// ended with a host-held output.
fn next(r: &mut Registry, h: u32, now_ms: u64) -> Result<f64, CapabilityError> {
    let Registry {
        host,
        invocations,
        route,
        ..
    } = r;
    let inv = invocations
        .get_mut(h)
        .ok_or_else(|| internal("no such invocation"))?;
    let kind = route.advance(host, inv, now_ms);
    let reported = ffi::reported_kind(inv, kind);
    let aux = ffi::step_aux(inv, kind);
    if reported == ffi::sentinel::DONE_OK_HOST {
        invocations.remove(h);
    }
    Ok(pack(u32::from(reported), aux))
}

fn options(r: &Registry, now: f64) -> InvokeOptions {
    InvokeOptions {
        now_ms: ms(now),
        audit: r.audit,
        audit_payloads: r.audit_payloads,
        span_payloads: r.span_payloads,
    }
}

/// A frame that is only a surface, one per surface, shared by every call
/// that has no more than that (the core copies a frame only to change it).
static SURFACE_FRAMES: std::sync::LazyLock<Vec<Arc<Frame>>> = std::sync::LazyLock::new(|| {
    Surface::ALL
        .iter()
        .map(|s| Arc::new(Frame::new(*s)))
        .collect()
});

fn frame_of(surface: u32, frame_json: Option<String>) -> Result<Arc<Frame>, CapabilityError> {
    match frame_json {
        Some(text) => serde_json::from_str(&text)
            .map(Arc::new)
            .map_err(|e| invalid(format!("invalid frame: {e}"))),
        None => usize::try_from(surface)
            .ok()
            .and_then(|i| SURFACE_FRAMES.get(i))
            .cloned()
            .ok_or_else(|| invalid("invalid frame: unknown surface index")),
    }
}

/// The core's verdict on the raw input as the façade serialized it
/// (`JSON.stringify`); `None` when it has no JSON text (a BigInt, a cycle:
/// only in-process code hands those over).
fn measured(input_text: Option<&str>) -> Option<Result<(), CapabilityError>> {
    input_text.map(orpc_agent_core::limits::check_serialized)
}

/// Registers a started invocation and returns its first step.
fn started(r: &mut Registry, inv: Invocation, now_ms: u64) -> Result<f64, CapabilityError> {
    let h = r.invocations.insert(inv);
    let first = next(r, h, now_ms)?;
    let kind = (first % 16.0) as u32;
    if kind == DONE_OK_HOST {
        // Cannot happen (no handler ran yet); keep the protocol simple.
        return Err(internal("invocation finished before it started"));
    }
    Ok(f64::from(kind) + 16.0 * f64::from(h))
}

/// [`invoke_start`] without the JS error mapping (shared with `raw.rs`).
pub fn start_in(
    reg: u32,
    capability: u32,
    surface: u32,
    frame_json: Option<String>,
    input_text: Option<&str>,
    now: f64,
) -> Result<f64, CapabilityError> {
    with_registry(reg, |r| {
        let frame = frame_of(surface, frame_json)?;
        start_index_in(r, capability, frame, input_text, now)
    })
}

/// The start both index paths share: the host's measure of the raw input,
/// then stages 1–3.
fn start_index_in(
    r: &mut Registry,
    capability: u32,
    frame: Arc<Frame>,
    input_text: Option<&str>,
    now: f64,
) -> Result<f64, CapabilityError> {
    let registry = Arc::clone(r.host.registry());
    let inv = Invocation::start_index_measured(
        registry,
        capability,
        frame,
        options(r, now),
        measured(input_text),
    );
    started(r, inv, ms(now))
}

/// [`start_in`] for a frame that is a surface and an actor with only an id.
pub fn start_actor_in(
    reg: u32,
    capability: u32,
    surface: u32,
    actor_id: String,
    input_text: Option<&str>,
    now: f64,
) -> Result<f64, CapabilityError> {
    with_registry(reg, |r| {
        let surface = u8::try_from(surface)
            .ok()
            .and_then(Surface::from_index)
            .ok_or_else(|| invalid("invalid frame: unknown surface index"))?;
        // Built, not cloned from the shared surface-only frame.
        let frame = Frame::new(surface).with_actor(Actor {
            id: Some(actor_id),
            ..Actor::default()
        });
        start_index_in(r, capability, Arc::new(frame), input_text, now)
    })
}

/// Starts an invocation of the capability at `capability` (an index the
/// façade resolved once from an id or tool name). `surface` is the
/// frame's surface index; `frame_json` carries the whole frame when it has
/// more than a surface (actor, trace, ids); `input_text` the raw input's
/// JSON text for the input limits. Returns `kind + 16 × handle`.
#[napi(catch_unwind)]
pub fn invoke_start(
    reg: u32,
    capability: u32,
    surface: u32,
    frame_json: Option<String>,
    input_text: Option<String>,
    now: f64,
) -> napi::Result<f64> {
    start_in(
        reg,
        capability,
        surface,
        frame_json,
        input_text.as_deref(),
        now,
    )
    .map_err(|e| throw(&e))
}

/// [`invoke_start`] by name, for names the façade does not know (the core
/// answers NOT_FOUND exactly as for an unexposed capability, SI-8).
#[napi(catch_unwind)]
pub fn invoke_start_name(
    reg: u32,
    name: String,
    surface: u32,
    frame_json: Option<String>,
    input_text: Option<String>,
    now: f64,
) -> napi::Result<f64> {
    registry_call(reg, |r| {
        let frame = frame_of(surface, frame_json)?;
        let registry = Arc::clone(r.host.registry());
        let inv = Invocation::start_measured(
            registry,
            &name,
            frame,
            options(r, now),
            measured(input_text.as_deref()),
        );
        started(r, inv, ms(now))
    })
}

/// Resumes an approved request (stage 7, then 9–14 with the recorded
/// surface and actor). The frame contributes trace and ids only — unless
/// `by_requester`: then its surface and actor must be the request's
/// (`Invocation::resume_by_requester`), else APPROVAL_NOT_FOUND. With
/// `through_capability` (a capability index: the resume comes through that
/// capability's tool, as over MCP) the request must also be for it, and a
/// frame without an actor may resume only a request made without one
/// (`Invocation::resume_through_tool`).
#[napi(catch_unwind)]
pub fn resume_start(
    reg: u32,
    approval_id: String,
    frame_json: Option<String>,
    by_requester: bool,
    now: f64,
    through_capability: Option<u32>,
    cancelled: Option<bool>,
) -> napi::Result<f64> {
    registry_call(reg, |r| {
        let frame = frame_of(Surface::Direct.index().into(), frame_json)?;
        let registry = std::sync::Arc::clone(r.host.registry());
        let opts = options(r, now);
        let mut inv = match (through_capability, by_requester) {
            (Some(index), _) => {
                Invocation::resume_through_tool(registry, &approval_id, index, frame, opts)
            }
            (None, true) => Invocation::resume_by_requester(registry, &approval_id, frame, opts),
            (None, false) => Invocation::resume(registry, &approval_id, frame, opts),
        };
        // The caller's signal was already aborted: the core ends the call
        // CANCELLED at its consume step, before the store runs it.
        if cancelled == Some(true) {
            let _ = inv.answer(Answer::Cancelled { now_ms: ms(now) });
        }
        started(r, inv, ms(now))
    })
}

/// Feeds `a` to invocation `h` and reports the next step (shared with
/// `raw.rs`).
pub fn answer_in(reg: u32, h: u32, now: f64, a: Answer) -> Result<f64, CapabilityError> {
    with_registry(reg, |r| {
        let inv = r
            .invocations
            .get_mut(h)
            .ok_or_else(|| internal("no such invocation"))?;
        // An out-of-turn answer ends the machine in Done(INTERNAL); the
        // host then reads that outcome like any other.
        let _ = inv.answer(a);
        next(r, h, ms(now))
    })
}

fn answer(reg: u32, h: u32, now: f64, a: Answer) -> napi::Result<f64> {
    answer_in(reg, h, now, a).map_err(|e| throw(&e))
}

fn read<T>(reg: u32, h: u32, f: impl FnOnce(&Invocation) -> T) -> napi::Result<T> {
    registry_call(reg, |r| {
        r.invocations
            .get(h)
            .map(f)
            .ok_or_else(|| internal("no such invocation"))
    })
}

// ----- reading a step's details ------------------------------------------

/// The `aux` number of the current step (for the first step, whose
/// packed result carries the handle instead).
#[napi(catch_unwind)]
pub fn invoke_aux(reg: u32, h: u32) -> napi::Result<f64> {
    read(reg, h, |inv| ffi::step_aux(inv, inv.step_kind()) as f64)
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

/// The input the current step shows, when the core holds it as JSON (a
/// resumed call's stored input); `None` when the host holds it.
#[napi(catch_unwind)]
pub fn invoke_input_json(reg: u32, h: u32) -> napi::Result<Option<String>> {
    read(reg, h, |inv| ffi::step_json(inv).map(js_text))
}

/// `AskRetryOn`: the error as JSON.
#[napi(catch_unwind)]
pub fn invoke_retry_error(reg: u32, h: u32) -> napi::Result<String> {
    read(reg, h, |inv| match inv.step() {
        Step::AskRetryOn { error } => error.to_json().to_string(),
        _ => Value::Null.to_string(),
    })
}

/// `RedactOutput` (and any later step): `{surface, capabilityId, actor}`
/// from the frozen frame — on resume, the recorded one (SI-3).
#[napi(catch_unwind)]
pub fn invoke_redaction_info(reg: u32, h: u32) -> napi::Result<String> {
    read(reg, h, |inv| {
        serde_json::to_string(&inv.redaction_info()).unwrap_or_else(|_| "null".into())
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
            Step::Audit(record) => {
                serde_json::to_string(&record.row()).unwrap_or_else(|_| "null".into())
            }
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
/// `{status: "ok", output?}` (no `output` when the host holds it),
/// `{status: "approval_required", request}` or `{status: "error", error}`.
#[napi(catch_unwind)]
pub fn invoke_outcome(reg: u32, h: u32) -> napi::Result<String> {
    registry_call(reg, |r| {
        let mut inv = r
            .invocations
            .remove(h)
            .ok_or_else(|| internal("no such invocation"))?;
        let outcome = inv
            .take_outcome()
            .unwrap_or_else(|| Outcome::Error(internal("the invocation has not finished")));
        let v = match outcome {
            Outcome::Ok(Payload::Host) => json!({"status": "ok"}),
            Outcome::Ok(Payload::Json(v)) => json!({"status": "ok", "output": v}),
            Outcome::ApprovalRequired(req) => {
                json!({"status": "approval_required", "request": req})
            }
            Outcome::Error(e) => json!({"status": "error", "error": e.to_json()}),
        };
        Ok(js_text(&v))
    })
}

/// Ends and frees an invocation the host gave up on (its driver threw):
/// the core's `Invocation::abandon` (INTERNAL, unless its outcome was
/// settled), and the finished audit record it still owes, for the façade
/// to deliver: `{row, telemetry}` JSON, the record as a row
/// ([`invoke_audit_row`]'s form) and its telemetry view, or null.
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
            Step::Audit(record) => serde_json::to_string(&json!({
                "row": record.row(),
                "telemetry": orpc_agent_core::telemetry::call_telemetry(record),
            }))
            .ok(),
            _ => None,
        })
    })
    .unwrap_or(None)
}

// ----- answers -------------------------------------------------------------

/// Any answer given as its code (`ffi::answer_code`, generated into
/// `Answer`) with at most one text and one flag (`ffi::answer` says which
/// answer reads which); the core reads it, and one it cannot read ends the
/// call INTERNAL.
#[napi(js_name = "answer", catch_unwind)]
pub fn answer_by_code(
    reg: u32,
    h: u32,
    code: u32,
    now: f64,
    text: Option<String>,
    flag: Option<bool>,
) -> napi::Result<f64> {
    let code = u8::try_from(code).unwrap_or(u8::MAX);
    let a = ffi::answer(code, text, flag.unwrap_or(false), ms(now));
    answer(reg, h, now, a)
}

/// `EvaluatePolicy`: the decision by its code (`ffi::decision_code`,
/// generated into `DECISION_CODE`); a code that names none fails the
/// policy (which denies).
#[napi(catch_unwind)]
pub fn answer_policy(
    reg: u32,
    h: u32,
    decision: u32,
    reason: Option<String>,
    approval_type: Option<String>,
    expires_in_ms: Option<f64>,
    now: f64,
) -> napi::Result<f64> {
    let a = ffi::policy_answer(decision, reason, approval_type, expires_in_ms.map(ms));
    answer(reg, h, now, a)
}

/// `RunHandler`: the handler failed (`ffi::handler_error`): `code` is its
/// own `CapabilityError` code, or absent for a plain throw.
#[napi(catch_unwind)]
pub fn answer_handler_error(
    reg: u32,
    h: u32,
    code: Option<String>,
    message: String,
    retryable: bool,
    now: f64,
) -> napi::Result<f64> {
    let a = ffi::handler_error(code.as_deref(), message, retryable, ms(now));
    answer(reg, h, now, a)
}

/// `RunHandler`: the handler threw an oRPC `ORPCError` (its fields as the
/// façade read them, `defined` as oRPC's `validateORPCError` decided). The
/// core's table decides the code, `retryable` and whether the message is
/// shown (`orpc_agent_core::orpc_error`).
#[napi(catch_unwind)]
pub fn answer_handler_orpc_error(
    reg: u32,
    h: u32,
    orpc_code: String,
    status: Option<u32>,
    defined: bool,
    message: String,
    now: f64,
) -> napi::Result<f64> {
    let status = status.and_then(|s| u16::try_from(s).ok());
    let e = orpc_agent_core::orpc_error::handler_error(&orpc_code, status, defined, &message);
    let a = Answer::HandlerError {
        code: Some(e.code),
        message: e.message,
        retryable: e.retryable,
        now_ms: ms(now),
    };
    answer(reg, h, now, a)
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
