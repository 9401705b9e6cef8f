//! Starting invocations: a fresh call by capability index or name, with a
//! surface-only frame, an actor id or a whole frame, and a resume. Each
//! returns the first step packed with the invocation's handle
//! (`kind + 16 × handle`; see `invoke.rs`).

use std::sync::Arc;

use napi_derive::napi;
use orpc_agent_core::ffi::ResumeLimit;
use orpc_agent_core::{Actor, CapabilityError, Frame, Invocation, InvokeOptions, Surface};

use crate::errors::{internal, invalid, throw};
use crate::invoke::{DONE_OK_HOST, ms, next};
use crate::registry::{Registry, registry_call, with_registry};

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
        Some(text) => orpc_agent_core::ffi::frame_from_json(&text).map(Arc::new),
        None => usize::try_from(surface)
            .ok()
            .and_then(|i| SURFACE_FRAMES.get(i))
            .cloned()
            .ok_or_else(|| invalid("invalid frame: unknown surface index")),
    }
}

/// The core's verdict on the raw input as the façade serialized it
/// (`JSON.stringify`), and where the input holds its first NaN or infinity
/// (which `JSON.stringify` writes as `null`): `ffi::measured_input`, as in
/// every binding. `None` when there is nothing to check (short text, or no
/// JSON text at all: a BigInt, a cycle, which only in-process code hands
/// over).
fn measured(
    input_text: Option<&str>,
    non_finite_at: Option<String>,
) -> Option<Result<(), CapabilityError>> {
    orpc_agent_core::ffi::measured_input(input_text, non_finite_at)
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
        measured(input_text, None),
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
/// answers NOT_FOUND exactly as for an unexposed capability, SI-8), for an
/// input with a non-finite number (`non_finite_at`, its pointer), and for
/// a caller whose signal is already aborted (`cancelled`).
#[napi(catch_unwind)]
// One crossing takes each part of a start as an argument of its own: no
// object for JavaScript to build or napi to read per call.
#[allow(clippy::too_many_arguments)]
pub fn invoke_start_name(
    reg: u32,
    name: String,
    surface: u32,
    frame_json: Option<String>,
    input_text: Option<String>,
    now: f64,
    non_finite_at: Option<String>,
    cancelled: Option<bool>,
) -> napi::Result<f64> {
    registry_call(reg, |r| {
        let frame = frame_of(surface, frame_json)?;
        let registry = Arc::clone(r.host.registry());
        let mut inv = Invocation::start_measured(
            registry,
            &name,
            frame,
            options(r, now),
            measured(input_text.as_deref(), non_finite_at),
        );
        if cancelled == Some(true) {
            // An already aborted signal: nothing stored, consumed or run.
            inv.caller_cancelled(ms(now));
        }
        started(r, inv, ms(now))
    })
}

/// Resumes an approved request (stage 7, then 9–14 with the recorded
/// surface and actor). The frame contributes trace and ids only — unless
/// `by_requester`: then its surface and actor must be the request's, else
/// APPROVAL_NOT_FOUND. With `through_tool` (a capability id or tool name:
/// the resume comes through that capability's tool, as over MCP) the
/// request must also be for it (`ffi::ResumeLimit`).
#[napi(catch_unwind)]
pub fn resume_start(
    reg: u32,
    approval_id: String,
    frame_json: Option<String>,
    by_requester: bool,
    now: f64,
    through_tool: Option<String>,
    cancelled: Option<bool>,
) -> napi::Result<f64> {
    registry_call(reg, |r| {
        let frame = frame_of(Surface::Direct.index().into(), frame_json)?;
        let registry = std::sync::Arc::clone(r.host.registry());
        let opts = options(r, now);
        let limit = ResumeLimit::from_options(through_tool.as_deref(), by_requester);
        // An already aborted signal: the core ends the call CANCELLED
        // before its consume step.
        let inv = limit.resume(registry, &approval_id, frame, opts, cancelled == Some(true));
        started(r, inv, ms(now))
    })
}
