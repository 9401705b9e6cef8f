//! The hot path: answering an invocation's steps (starting one is
//! `start.rs`, reading a step's details `step.rs`).
//!
//! Every function here returns the **next step** as one number:
//! `kind + 16 × aux`, where `kind` is the core's `StepKind` (1–13) or
//! [`DONE_OK_HOST`] (`ffi::reported_kind`), and `aux` is the one value the
//! host needs for that step (`ffi::step_aux`: a deadline, a wait, a
//! policy's place), so it needs no second crossing.
//!
//! `invokeStart` returns `kind + 16 × handle` instead: the handle of the
//! invocation in its registry's slab (read the deadline with `invokeAux`
//! when the first step needs its aux number).
//!
//! Store steps (persist, consume an approval) never reach JavaScript: the
//! memory and SQLite stores complete synchronously inside the call
//! (`BindingRegistry::advance`).

use napi_derive::napi;
use orpc_agent_core::ffi;
use orpc_agent_core::{Answer, CapabilityError};

use crate::errors::{internal, throw};
use crate::registry::{Registry, with_registry};

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
pub(crate) fn next(r: &mut Registry, h: u32, now_ms: u64) -> Result<f64, CapabilityError> {
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
    coded_answer_in(reg, h, code, now, text, flag.unwrap_or(false)).map_err(|e| throw(&e))
}

/// [`answer_by_code`] without the napi glue (shared with `raw.rs`): a code
/// past `u8` is one the core does not know either.
pub fn coded_answer_in(
    reg: u32,
    h: u32,
    code: u32,
    now: f64,
    text: Option<String>,
    flag: bool,
) -> Result<f64, CapabilityError> {
    let code = u8::try_from(code).unwrap_or(u8::MAX);
    answer_in(reg, h, now, ffi::answer(code, text, flag, ms(now)))
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
/// own `CapabilityError` code, or absent for a plain throw; `details` its
/// details as JSON text (absent when it has none or no JSON form).
#[napi(catch_unwind)]
pub fn answer_handler_error(
    reg: u32,
    h: u32,
    code: Option<String>,
    message: String,
    retryable: bool,
    details: Option<String>,
    now: f64,
) -> napi::Result<f64> {
    let a = ffi::handler_error(
        code.as_deref(),
        message,
        retryable,
        details.as_deref(),
        ms(now),
    );
    answer(reg, h, now, a)
}

/// The fields of an oRPC `ORPCError` a handler threw, as the façade read
/// them: `defined` as oRPC's `validateORPCError` decided, `data` as JSON
/// text (absent when it has none or no JSON form).
#[napi(object)]
pub struct ThrownOrpcError {
    pub code: String,
    pub status: Option<u32>,
    pub defined: bool,
    pub message: String,
    pub data: Option<String>,
}

/// `RunHandler`: the handler threw an oRPC `ORPCError`
/// (`ffi::orpc_handler_error` decides what the caller is shown).
#[napi(catch_unwind)]
pub fn answer_handler_orpc_error(
    reg: u32,
    h: u32,
    error: ThrownOrpcError,
    now: f64,
) -> napi::Result<f64> {
    let status = error.status.and_then(|s| u16::try_from(s).ok());
    let (code, message, data) = (&error.code, &error.message, error.data.as_deref());
    let a = ffi::orpc_handler_error(code, status, error.defined, message, data, ms(now));
    answer(reg, h, now, a)
}
