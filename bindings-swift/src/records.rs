//! The core's domain records as typed uniffi records (issue 16): a frame,
//! its actor and trace, what a redactor is told, an approval request and an
//! audit record cross as fields Swift reads as they are, not as JSON text
//! Swift parses. A field the core always has cannot be missing or of
//! another type on the Swift side, so there is nothing to default and no
//! "malformed" error to handle.
//!
//! Values that are open-ended JSON in the core (an actor's attributes, a
//! request's input, a recorded output) cross as JSON text: Swift's type for
//! them is `JSONValue`. Approval requests and audit records also carry
//! their whole JSON form, which Swift exposes as `json`, written once here
//! by the core's own serialization.
//!
//! The conversions are `From` impls on the core's types (as matrix-rust-sdk
//! does), so a field added to a core type is a compile error here until it
//! is carried or deliberately left out.

use orpc_agent_core::approval::{ApprovalRequest, ListFilter};
use orpc_agent_core::ffi::next_cursor;
use orpc_agent_core::pipeline::audit::{AuditEvent, AuditRecord, PolicyRecord};
use orpc_agent_core::pipeline::redaction::RedactionInfo;
use orpc_agent_core::{Actor, Frame, Surface, TraceContext};
use serde_json::{Map, Value};

use crate::{FfiError, invalid_input};

/// A surface, as a record field (calls that start an invocation take the
/// surface's index: a fieldless enum still crosses uniffi in a buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum FfiSurface {
    Direct,
    AiSdk,
    Mcp,
    Workflow,
    Test,
}

impl From<Surface> for FfiSurface {
    fn from(s: Surface) -> FfiSurface {
        match s {
            Surface::Direct => FfiSurface::Direct,
            Surface::AiSdk => FfiSurface::AiSdk,
            Surface::Mcp => FfiSurface::Mcp,
            Surface::Workflow => FfiSurface::Workflow,
            Surface::Test => FfiSurface::Test,
        }
    }
}

/// The caller (SI-3). `attributes_json` is a JSON object.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiActor {
    pub id: Option<String>,
    pub roles: Vec<String>,
    pub attributes_json: String,
}

impl From<&Actor> for FfiActor {
    fn from(a: &Actor) -> FfiActor {
        FfiActor {
            id: a.id.clone(),
            roles: a.roles.clone(),
            attributes_json: Value::Object(a.attributes.clone()).to_string(),
        }
    }
}

impl TryFrom<FfiActor> for Actor {
    type Error = FfiError;
    fn try_from(a: FfiActor) -> Result<Actor, FfiError> {
        let attributes: Map<String, Value> = serde_json::from_str(&a.attributes_json)
            .map_err(|e| invalid_input(format!("actor attributes are not a JSON object: {e}")))?;
        Ok(Actor {
            id: a.id,
            roles: a.roles,
            attributes,
        })
    }
}

/// W3C trace context.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct FfiTrace {
    pub traceparent: String,
    pub tracestate: Option<String>,
}

impl From<&TraceContext> for FfiTrace {
    fn from(t: &TraceContext) -> FfiTrace {
        FfiTrace {
            traceparent: t.traceparent.clone(),
            tracestate: t.tracestate.clone(),
        }
    }
}

impl From<FfiTrace> for TraceContext {
    fn from(t: FfiTrace) -> TraceContext {
        TraceContext {
            traceparent: t.traceparent,
            tracestate: t.tracestate,
        }
    }
}

/// A frame without its surface: what a caller adds to it (actor, trace,
/// ids). A call that carries only a surface sends none of this.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiFrameDetails {
    pub actor: FfiActor,
    pub trace: Option<FfiTrace>,
    pub request_id: Option<String>,
    pub agent_id: Option<String>,
    pub session_id: Option<String>,
}

impl FfiFrameDetails {
    /// The core's frame on `surface` with these details.
    pub(crate) fn into_frame(self, surface: Surface) -> Result<Frame, FfiError> {
        Ok(Frame {
            surface,
            actor: self.actor.try_into()?,
            trace: self.trace.map(Into::into),
            request_id: self.request_id,
            agent_id: self.agent_id,
            session_id: self.session_id,
        })
    }
}

/// A whole frame, as the core holds it (a resumed call's: the request's
/// recorded surface and actor, the caller's trace and ids).
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiFrame {
    pub surface: FfiSurface,
    pub details: FfiFrameDetails,
}

impl From<&Frame> for FfiFrame {
    fn from(f: &Frame) -> FfiFrame {
        FfiFrame {
            surface: f.surface.into(),
            details: FfiFrameDetails {
                actor: (&f.actor).into(),
                trace: f.trace.as_ref().map(Into::into),
                request_id: f.request_id.clone(),
                agent_id: f.agent_id.clone(),
                session_id: f.session_id.clone(),
            },
        }
    }
}

/// What a redactor is told (DESIGN §6).
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiRedactionInfo {
    pub surface: FfiSurface,
    pub capability_id: String,
    pub actor: FfiActor,
}

impl From<RedactionInfo<'_>> for FfiRedactionInfo {
    fn from(i: RedactionInfo<'_>) -> FfiRedactionInfo {
        FfiRedactionInfo {
            surface: i.surface.into(),
            capability_id: i.capability_id.to_owned(),
            actor: i.actor.into(),
        }
    }
}

/// An approval request as an approval UI reads it at some instant
/// (`status` the effective one: `expired` past its expiry). Its input hash
/// never leaves the store.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiApprovalRequest {
    pub id: String,
    pub capability_id: String,
    pub input_json: String,
    pub surface: FfiSurface,
    pub actor: FfiActor,
    pub approval_type: Option<String>,
    pub reason: Option<String>,
    pub created_at_ms: u64,
    pub expires_at_ms: u64,
    /// `pending`, `approved`, `rejected`, `consumed` or `expired`.
    pub status: String,
    pub decided_by: Option<String>,
    pub decided_at_ms: Option<u64>,
    pub decision_reason: Option<String>,
    pub session_id: Option<String>,
    /// The request's JSON form (`ApprovalRequest::to_json_at`).
    pub json: String,
}

impl FfiApprovalRequest {
    /// `request` as of `now_ms`.
    pub(crate) fn at(request: &ApprovalRequest, now_ms: u64) -> FfiApprovalRequest {
        FfiApprovalRequest {
            id: request.id.clone(),
            capability_id: request.capability_id.clone(),
            input_json: request.input.to_string(),
            surface: request.surface.into(),
            actor: (&request.actor).into(),
            approval_type: request.approval_type.clone(),
            reason: request.reason.clone(),
            created_at_ms: request.created_at_ms,
            expires_at_ms: request.expires_at_ms,
            status: request.effective_status(now_ms).as_str().to_owned(),
            decided_by: request.decided_by.clone(),
            decided_at_ms: request.decided_at_ms,
            decision_reason: request.decision_reason.clone(),
            session_id: request.session_id.clone(),
            json: request.to_json_at(now_ms).to_string(),
        }
    }

    /// Each of `requests` as of `now_ms`.
    pub(crate) fn all_at(requests: &[ApprovalRequest], now_ms: u64) -> Vec<FfiApprovalRequest> {
        requests.iter().map(|r| Self::at(r, now_ms)).collect()
    }
}

/// One policy decision of an audit record.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct FfiPolicyRecord {
    /// `runtime` or `capability`.
    pub scope: String,
    pub index: u32,
    pub name: Option<String>,
    /// `enforce` or `shadow`.
    pub mode: String,
    pub host: bool,
    /// `allow`, `deny`, `requireApproval` or `abstain`.
    pub decision: String,
    pub reason: Option<String>,
    pub approval_type: Option<String>,
    pub failed: bool,
}

impl From<&PolicyRecord> for FfiPolicyRecord {
    fn from(p: &PolicyRecord) -> FfiPolicyRecord {
        FfiPolicyRecord {
            scope: p.scope.as_str().to_owned(),
            index: p.index,
            name: p.name.clone(),
            mode: p.mode.as_str().to_owned(),
            host: p.host,
            decision: p.decision.to_owned(),
            reason: p.reason.clone(),
            approval_type: p.approval_type.clone(),
            failed: p.failed,
        }
    }
}

/// One audit record (schema in docs/decisions.md).
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiAuditRecord {
    /// `started` or `finished`.
    pub event: String,
    pub capability_id: Option<String>,
    pub requested: Option<String>,
    pub surface: FfiSurface,
    pub actor_id: Option<String>,
    pub resumed: bool,
    pub policies: Vec<FfiPolicyRecord>,
    pub approval_id: Option<String>,
    pub attempts: u32,
    pub started_at_ms: u64,
    pub duration_ms: u64,
    /// `ok`, `approval_required` or an error code; `None` on `started`.
    pub outcome: Option<String>,
    /// 1–14.
    pub stage: u8,
    pub trace: Option<FfiTrace>,
    pub request_id: Option<String>,
    pub agent_id: Option<String>,
    pub session_id: Option<String>,
    pub failure: Option<String>,
    /// The redacted output (JSON text), only with `auditPayloads` and only
    /// on success.
    pub output_json: Option<String>,
    /// The record's JSON form (`AuditRecord::to_json`).
    pub json: String,
}

impl From<&AuditRecord> for FfiAuditRecord {
    fn from(r: &AuditRecord) -> FfiAuditRecord {
        FfiAuditRecord {
            event: match r.event {
                AuditEvent::Started => "started",
                AuditEvent::Finished => "finished",
            }
            .to_owned(),
            capability_id: r.capability_id.clone(),
            requested: r.requested.clone(),
            surface: r.surface.into(),
            actor_id: r.actor_id.clone(),
            resumed: r.resumed,
            policies: r.policies.iter().map(Into::into).collect(),
            approval_id: r.approval_id.clone(),
            attempts: r.attempts,
            started_at_ms: r.started_at,
            duration_ms: r.duration_ms,
            outcome: r.outcome.map(str::to_owned),
            stage: r.stage as u8,
            trace: r.traceparent.as_ref().map(|traceparent| FfiTrace {
                traceparent: traceparent.clone(),
                tracestate: r.tracestate.clone(),
            }),
            request_id: r.request_id.clone(),
            agent_id: r.agent_id.clone(),
            session_id: r.session_id.clone(),
            failure: r.failure.clone(),
            output_json: r.output.as_ref().map(Value::to_string),
            json: r.to_json().to_string(),
        }
    }
}

/// One page of approval requests for an approval UI; `next_cursor` is
/// `None` on the last page.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiApprovalPage {
    pub requests: Vec<FfiApprovalRequest>,
    pub next_cursor: Option<String>,
}

impl FfiApprovalPage {
    /// `page` as listed with `filter` (the requests as of its `now_ms`).
    pub(crate) fn of(page: &[ApprovalRequest], filter: &ListFilter) -> FfiApprovalPage {
        FfiApprovalPage {
            requests: FfiApprovalRequest::all_at(page, filter.now_ms),
            next_cursor: next_cursor(page, filter),
        }
    }
}
