//! Stages 7–8: the approval grant check (resume) and the approval gate.
//!
//! Both routes to an approval — the static `approval.required` and an
//! enforced policy `requireApproval` — build their request through
//! [`approval_request_for`], so they are identical for the same call:
//! type, reason and expiry come from the first enforced `requireApproval`
//! decision field by field, else from the static `approval` config, else
//! the defaults (no type; the reason "This call needs approval before it
//! runs."; expiry `approval.expiresInMs` or the runtime default).

use serde_json::Value;

use super::step::{Answer, Decision};
use crate::approval::{ApprovalRequest, ApprovalStore, ConsumeRefusal, Requester};
use crate::error::{CapabilityError, ErrorCode};
use crate::frame::Frame;
use crate::registry::{Capability, CapabilityRegistry};

/// The default reason of an approval request with none configured.
pub const DEFAULT_APPROVAL_REASON: &str = "This call needs approval before it runs.";

/// The requireApproval fields a policy decided (`None` when the gate is
/// static only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApprovalDraft {
    pub approval_type: Option<String>,
    pub reason: Option<String>,
    pub expires_in_ms: Option<u64>,
}

impl ApprovalDraft {
    /// The draft of a `RequireApproval` decision.
    pub fn from_decision(d: &Decision) -> Option<ApprovalDraft> {
        match d {
            Decision::RequireApproval {
                approval_type,
                reason,
                expires_in_ms,
            } => Some(ApprovalDraft {
                approval_type: approval_type.clone(),
                reason: reason.clone(),
                expires_in_ms: *expires_in_ms,
            }),
            _ => None,
        }
    }
}

/// The one constructor of stage-8 approval requests (DESIGN §5).
pub fn approval_request_for(
    cap: &Capability,
    input: Value,
    input_hash: String,
    frame: &Frame,
    draft: Option<&ApprovalDraft>,
    now_ms: u64,
) -> ApprovalRequest {
    let statics = cap.meta.approval.as_ref();
    let approval_type = draft
        .and_then(|d| d.approval_type.clone())
        .or_else(|| statics.and_then(|s| s.kind.clone()));
    let reason = draft
        .and_then(|d| d.reason.clone())
        .unwrap_or_else(|| DEFAULT_APPROVAL_REASON.to_owned());
    let expires_in_ms = draft
        .and_then(|d| d.expires_in_ms)
        .unwrap_or(cap.approval_expires_in_ms);
    ApprovalRequest::new(
        cap.id.clone(),
        input,
        input_hash,
        frame.surface,
        frame.actor.clone(),
        approval_type,
        Some(reason),
        now_ms,
        expires_in_ms,
    )
    .with_session_id(frame.session_id.clone())
}

/// NOT_FOUND: the same error, field for field, whether the capability is
/// missing or not exposed on this surface, and whatever name was asked for
/// (SI-8). The name is not echoed: the caller knows it, and a constant
/// message cannot become an oracle or reflect attacker text.
pub fn not_found(_name: &str) -> CapabilityError {
    CapabilityError::new(ErrorCode::NotFound, NOT_FOUND_MESSAGE)
}

/// The one message of the capability-level NOT_FOUND ([`not_found`]). A
/// handler may throw NOT_FOUND with its own message for a thing it did not
/// find (a domain error): that one names no missing tool.
pub const NOT_FOUND_MESSAGE: &str =
    "No such capability is available here. Use one of the tools you were given.";

fn invalid(message: &str) -> CapabilityError {
    CapabilityError::new(ErrorCode::ApprovalInvalid, message)
}

/// Stage 7 after the store consumed `request` for resume id `id`: checks
/// that it is the request asked for, that its capability still exists and
/// is exposed on the *recorded* surface (else NOT_FOUND, as for any call),
/// and that the stored input still hashes to the recorded hash (SI-7).
/// Returns the capability to run.
///
/// Expiry is not checked again here: the store decided it atomically with
/// the consumption, on the store's clock (the database's, for PostgreSQL).
/// A second check on this instance's clock could only refuse an approval
/// the store had already used up.
pub fn verify_grant<'r>(
    registry: &'r CapabilityRegistry,
    id: &str,
    request: &ApprovalRequest,
) -> Result<&'r Capability, CapabilityError> {
    if request.id != id {
        return Err(invalid(
            "The approval store returned a different request than the one asked for.",
        ));
    }
    let cap = registry
        .resolve(&request.capability_id)
        .filter(|c| c.id == request.capability_id && c.exposed_on(request.surface))
        .ok_or_else(|| not_found(&request.capability_id))?;
    match crate::act::input_hash(&cap.id, &request.input) {
        Ok(h) if h == request.input_hash => Ok(cap),
        _ => Err(invalid(
            "The approved input does not match the approval request; ask for a new approval.",
        )),
    }
}

/// Performs `PersistApproval` for every driver (the host registry's
/// synchronous and waiting paths, the tokio driver): a new request, or,
/// when the call may repeat an earlier one (`Invocation::persist_repeats`),
/// the store's `create_or_repeat`, whose earlier request is answered
/// [`Answer::RepeatedApproval`].
pub async fn persist_answer(
    store: &dyn crate::approval::ApprovalStore,
    request: &ApprovalRequest,
    repeats: bool,
) -> Answer {
    use crate::approval::Created;
    let created = if repeats {
        store.create_or_repeat(request).await
    } else {
        store.create(request).await.map(|()| Created::New)
    };
    match created {
        Ok(Created::New) => Answer::Persisted,
        Ok(Created::Pending(r) | Created::Approved(r)) => Answer::RepeatedApproval(Box::new(r)),
        Err(e) => Answer::StoreFailed(e.into()),
    }
}

/// The answer to a `ConsumeApproval` step: the store's atomic consume,
/// mapped once for every driver (the host registry's synchronous and
/// waiting paths, the tokio driver). A refusal other than "not found" —
/// the request exists and is the caller's to know about — reads the
/// request back so the audit record names what was refused
/// ([`Answer::ConsumeRefused`]); the read happens only on that slow path.
pub async fn consume_answer(
    store: &dyn ApprovalStore,
    id: &str,
    now_ms: u64,
    requester: Option<&Requester>,
) -> Answer {
    match store.consume_for(id, now_ms, requester).await {
        Ok(Ok(request)) => Answer::Consumed(Ok(Box::new(request))),
        Ok(Err(ConsumeRefusal::NotFound)) => Answer::Consumed(Err(ConsumeRefusal::NotFound.into())),
        Ok(Err(refusal)) => match store.get(id).await {
            Ok(Some(request)) => Answer::ConsumeRefused {
                error: refusal.into(),
                request: Box::new(request),
            },
            _ => Answer::Consumed(Err(refusal.into())),
        },
        Err(e) => Answer::Consumed(Err(e.into())),
    }
}

/// The message of the CREDENTIAL_REQUIRED error a gated call gets on a
/// surface whose approvals are kept per caller, when its frame names no
/// actor id and no session id: two anonymous callers could not be told
/// apart, so neither may own a request.
pub const CALLER_REQUIRED_MESSAGE: &str = "This call needs approval, and an approval here is kept \
     for the caller who asked, but the call names no caller (no actor id, no session id). It \
     did not run.";

/// The details of that CREDENTIAL_REQUIRED error, `{"callerRequired":
/// true}`: an in-process adapter shows it to the application as its own
/// configuration error (the frame it was given names no caller) rather
/// than to the model.
pub fn caller_required_details() -> serde_json::Value {
    serde_json::json!({"callerRequired": true})
}
