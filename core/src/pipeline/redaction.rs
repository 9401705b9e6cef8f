//! `RedactionInfo` (DESIGN §6): what a redactor is told about the call.
//!
//! The core's part is surface, capability id and actor — all from the
//! frozen frame, or on a resumed approval from the request as recorded
//! (SI-3). The application context is opaque to the core: the host adds
//! its own when it calls the redactor.

use serde::Serialize;

use crate::approval::ApprovalRequest;
use crate::error::CapabilityError;
use crate::frame::Actor;
use crate::meta::Surface;
use crate::registry::CapabilityRegistry;

/// EXECUTION_FAILED's message when a capability's `redact.approvalInput`
/// hook fails: the approval UI shows nothing of the input, and the hook's
/// own text is for the operator's log only.
pub const APPROVAL_VIEW_FAILED_MESSAGE: &str =
    "The approval input could not be prepared for display.";

/// A read-only view handed to `redact.output` and `redact.approvalInput`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RedactionInfo<'a> {
    pub surface: Surface,
    pub capability_id: &'a str,
    pub actor: &'a Actor,
}

impl<'a> RedactionInfo<'a> {
    /// The info for an approval request: its *recorded* surface and actor,
    /// never the ones of whoever is looking at it.
    pub fn for_request(request: &'a ApprovalRequest) -> RedactionInfo<'a> {
        RedactionInfo {
            surface: request.surface,
            capability_id: &request.capability_id,
            actor: &request.actor,
        }
    }
}

/// `redactApprovalInput` support: how an approval UI may show `request`'s
/// input — through the capability's `redact.approvalInput` hook with the
/// request's *recorded* surface and actor, or as stored (no hook
/// declared). A request whose capability the registry no longer has is
/// withheld: nothing is known to be safe to show, and the answer is the
/// core's NOT_FOUND, as a call to it would be (SI-8). The hash still binds
/// the full stored input.
pub fn approval_input_redaction<'a>(
    registry: &CapabilityRegistry,
    request: &'a ApprovalRequest,
) -> Result<ApprovalInputView<'a>, CapabilityError> {
    match registry.resolve(&request.capability_id) {
        Some(cap) if cap.id == request.capability_id => Ok(if cap.meta.redact.approval_input {
            ApprovalInputView::Redact {
                capability_index: cap.index,
                info: RedactionInfo::for_request(request),
                timeout_ms: cap.timeout_ms,
            }
        } else {
            ApprovalInputView::AsStored
        }),
        _ => Err(super::gate::not_found(&request.capability_id)),
    }
}

/// How an approval UI may show a request's input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ApprovalInputView<'a> {
    /// Call the capability's `redact.approvalInput` hook with this info and
    /// show its result; if it throws, show nothing.
    Redact {
        capability_index: u32,
        info: RedactionInfo<'a>,
        /// How long the hook may take (the capability's timeout, as for
        /// its other hooks): past it the view fails as if the hook threw,
        /// so a hook that never settles holds no approval UI or MCP call.
        timeout_ms: u64,
    },
    /// The capability declares no approval-input redactor.
    AsStored,
}
