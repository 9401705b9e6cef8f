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
//! their whole JSON form, which Swift exposes as `json`, written once (in
//! the conversions) by the core's own serialization.
//!
//! The conversions are `From` impls on the core's types (as matrix-rust-sdk
//! does) that destructure them whole, so a field added to a core type is a
//! compile error in them until it is carried or deliberately left out.
//!
//! The record types are defined here; their conversions live in the
//! submodules, by subject: `frame` (surface, actor, trace, frame,
//! redaction info), `approval` (requests and pages) and `audit` (audit
//! records and their policy decisions). `FfiErrorInfo`, of none of them,
//! keeps its conversion beside it. The types stay in this module because
//! uniffi writes a type's module path into the metadata, and so into the
//! checksum, of every exported call that takes or returns it: moving one
//! would change the generated Swift bindings.

mod approval;
mod audit;
mod frame;

use orpc_agent_core::CapabilityError;

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

/// The caller (SI-3). `attributes_json` is a JSON object.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiActor {
    pub id: Option<String>,
    pub roles: Vec<String>,
    pub attributes_json: String,
}

/// W3C trace context.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct FfiTrace {
    pub traceparent: String,
    pub tracestate: Option<String>,
}

/// A frame without its surface: what a caller adds to it (actor, trace,
/// ids). A call that carries only a surface sends none of this.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiFrameDetails {
    pub actor: FfiActor,
    /// Where in the actor's attributes Swift met a NaN or infinite number
    /// (a JSON Pointer into them), which it wrote as `null`: the glue
    /// refuses such a frame before the core sees it (INVALID_INPUT
    /// `NON_FINITE_NUMBER`, as Node and Python do) instead of reading
    /// `null`. Always `None` from the core.
    pub attributes_non_finite_at: Option<String>,
    pub trace: Option<FfiTrace>,
    pub request_id: Option<String>,
    pub agent_id: Option<String>,
    pub session_id: Option<String>,
}

/// A whole frame, as the core holds it (a resumed call's: the request's
/// recorded surface and actor, the caller's trace and ids).
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiFrame {
    pub surface: FfiSurface,
    pub details: FfiFrameDetails,
}

/// What a redactor is told (DESIGN §6).
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiRedactionInfo {
    pub surface: FfiSurface,
    pub capability_id: String,
    pub actor: FfiActor,
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

/// One page of approval requests for an approval UI; `next_cursor` is
/// `None` on the last page.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FfiApprovalPage {
    pub requests: Vec<FfiApprovalRequest>,
    pub next_cursor: Option<String>,
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
