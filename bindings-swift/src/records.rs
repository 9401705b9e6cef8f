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
//! does) that destructure them whole, so a field added to a core type is a
//! compile error here until it is carried or deliberately left out.

use orpc_agent_core::approval::{ApprovalRequest, ListFilter};
use orpc_agent_core::ffi::next_cursor;
use orpc_agent_core::pipeline::audit::{AuditRecord, PolicyRecord};
use orpc_agent_core::pipeline::redaction::RedactionInfo;
use orpc_agent_core::{Actor, CapabilityError, Frame, Surface, TraceContext};
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
        let Actor {
            id,
            roles,
            attributes,
        } = a;
        FfiActor {
            id: id.clone(),
            roles: roles.clone(),
            attributes_json: Value::Object(attributes.clone()).to_string(),
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
        let TraceContext {
            traceparent,
            tracestate,
        } = t;
        FfiTrace {
            traceparent: traceparent.clone(),
            tracestate: tracestate.clone(),
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
        let Frame {
            surface,
            actor,
            trace,
            request_id,
            agent_id,
            session_id,
        } = f;
        FfiFrame {
            surface: (*surface).into(),
            details: FfiFrameDetails {
                actor: actor.into(),
                trace: trace.as_ref().map(Into::into),
                request_id: request_id.clone(),
                agent_id: agent_id.clone(),
                session_id: session_id.clone(),
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
        let RedactionInfo {
            surface,
            capability_id,
            actor,
        } = i;
        FfiRedactionInfo {
            surface: surface.into(),
            capability_id: capability_id.to_owned(),
            actor: actor.into(),
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
    /// `request` as an approval UI reads it at `now_ms` (get, list, decide):
    /// `expired` once past its expiry.
    pub(crate) fn at(request: &ApprovalRequest, now_ms: u64) -> FfiApprovalRequest {
        let status = request.effective_status(now_ms).as_str();
        Self::with(request, status, request.to_json_at(now_ms))
    }

    /// `request` as stored, for an `approval_required` outcome: the status
    /// the core gave it when it persisted or found it (as every binding's
    /// outcome shows it), not one judged again at a later clock reading.
    pub(crate) fn as_stored(request: &ApprovalRequest) -> FfiApprovalRequest {
        Self::with(request, request.status.as_str(), request.to_json())
    }

    fn with(request: &ApprovalRequest, status: &str, json: Value) -> FfiApprovalRequest {
        let ApprovalRequest {
            id,
            capability_id,
            input_hash: _, // never leaves the store (issue 15)
            input,
            surface,
            actor,
            approval_type,
            reason,
            created_at_ms,
            expires_at_ms,
            status: _, // as the caller judged it
            decided_by,
            decided_at_ms,
            decision_reason,
            session_id,
        } = request;
        FfiApprovalRequest {
            id: id.clone(),
            capability_id: capability_id.clone(),
            input_json: input.to_string(),
            surface: (*surface).into(),
            actor: actor.into(),
            approval_type: approval_type.clone(),
            reason: reason.clone(),
            created_at_ms: *created_at_ms,
            expires_at_ms: *expires_at_ms,
            status: status.to_owned(),
            decided_by: decided_by.clone(),
            decided_at_ms: *decided_at_ms,
            decision_reason: decision_reason.clone(),
            session_id: session_id.clone(),
            json: json.to_string(),
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
        let PolicyRecord {
            scope,
            index,
            name,
            mode,
            host,
            decision,
            reason,
            approval_type,
            failed,
        } = p;
        FfiPolicyRecord {
            scope: scope.as_str().to_owned(),
            index: *index,
            name: name.clone(),
            mode: mode.as_str().to_owned(),
            host: *host,
            decision: (*decision).to_owned(),
            reason: reason.clone(),
            approval_type: approval_type.clone(),
            failed: *failed,
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
        let AuditRecord {
            event,
            capability_id,
            requested,
            surface,
            actor_id,
            resumed,
            policies,
            approval_id,
            attempts,
            started_at,
            duration_ms,
            outcome,
            stage,
            traceparent,
            tracestate,
            request_id,
            agent_id,
            session_id,
            failure,
            output,
            span_output: _, // the span's, never an audit record's
        } = r;
        FfiAuditRecord {
            event: event.as_str().to_owned(),
            capability_id: capability_id.clone(),
            requested: requested.clone(),
            surface: (*surface).into(),
            actor_id: actor_id.clone(),
            resumed: *resumed,
            policies: policies.iter().map(Into::into).collect(),
            approval_id: approval_id.clone(),
            attempts: *attempts,
            started_at_ms: *started_at,
            duration_ms: *duration_ms,
            outcome: outcome.map(str::to_owned),
            stage: stage.number(),
            trace: traceparent.as_ref().map(|traceparent| FfiTrace {
                traceparent: traceparent.clone(),
                tracestate: tracestate.clone(),
            }),
            request_id: request_id.clone(),
            agent_id: agent_id.clone(),
            session_id: session_id.clone(),
            failure: failure.clone(),
            output_json: output.as_ref().map(Value::to_string),
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

/// A `CapabilityError` as a record (outcomes, `AskRetryOn`).
#[derive(Clone, Debug, uniffi::Record)]
pub struct FfiErrorInfo {
    pub code: String,
    pub message: String,
    pub retryable: bool,
    pub details_json: Option<String>,
}

impl From<&CapabilityError> for FfiErrorInfo {
    fn from(e: &CapabilityError) -> FfiErrorInfo {
        FfiErrorInfo {
            code: e.code.as_str().to_owned(),
            message: e.message.clone(),
            retryable: e.retryable,
            details_json: e.details.as_ref().map(|d| d.to_string()),
        }
    }
}

/// An accepted progress report: `total` carried forward once given.
#[derive(uniffi::Record)]
pub struct ProgressReport {
    pub done: u64,
    pub total: Option<u64>,
}
