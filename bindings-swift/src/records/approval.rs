//! Approval requests as an approval UI reads them: one request at an
//! instant or as stored, and a page of them with its cursor.

use orpc_agent_core::approval::{ApprovalRequest, ListFilter};
use orpc_agent_core::ffi::next_cursor;
use serde_json::Value;

use super::{FfiApprovalPage, FfiApprovalRequest};

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

impl FfiApprovalPage {
    /// `page` as listed with `filter` (the requests as of its `now_ms`).
    pub(crate) fn of(page: &[ApprovalRequest], filter: &ListFilter) -> FfiApprovalPage {
        FfiApprovalPage {
            requests: FfiApprovalRequest::all_at(page, filter.now_ms),
            next_cursor: next_cursor(page, filter),
        }
    }
}
