//! `FfiRegistry`'s approval types as the core's: the resume limit and the
//! view of a request's input, both decided in the core (`ffi::ResumeLimit`,
//! `ffi::ApprovalView`).

use std::sync::Arc;

use orpc_agent_core::approval::ApprovalRequest;
use orpc_agent_core::ffi::{ApprovalView, ResumeLimit};
use orpc_agent_core::{CapabilityRegistry, Frame, Invocation, InvokeOptions};

use super::FfiResumeLimit;
use crate::records::FfiRedactionInfo;

/// How an approval UI may show a request's input (`redactApprovalInput`).
#[derive(Debug, uniffi::Record)]
pub struct FfiApprovalView {
    /// `ffi::approval_view_code` (Swift's `ApprovalViewCode`): show
    /// `input_json` as stored, or through the `redact.approvalInput` of
    /// capability `capability_index` with `info`. (Capability gone: NOT_FOUND.)
    pub kind: u8,
    pub capability_index: u32,
    pub input_json: Option<String>,
    pub info: Option<FfiRedactionInfo>,
    /// How long the redactor may take (the core's bound; 0 when none runs).
    pub timeout_ms: u64,
}

impl FfiResumeLimit {
    /// The core invocation that resumes `approval_id` as this limit allows
    /// (`ffi::ResumeLimit`: the core resolves the tool and decides).
    pub(super) fn resume(
        self,
        registry: Arc<CapabilityRegistry>,
        approval_id: &str,
        frame: Frame,
        opts: InvokeOptions,
        cancelled: bool,
    ) -> Invocation {
        let limit = match &self {
            FfiResumeLimit::Trusted => ResumeLimit::Trusted,
            FfiResumeLimit::Requester => ResumeLimit::Requester,
            FfiResumeLimit::ThroughTool { id_or_tool_name } => {
                ResumeLimit::ThroughTool(id_or_tool_name)
            }
        };
        limit.resume(registry, approval_id, frame, opts, cancelled)
    }
}

impl FfiApprovalView {
    /// The core's view of `request`'s input (`ffi::ApprovalView`), with the
    /// input as stored.
    pub(crate) fn of(request: &ApprovalRequest, view: ApprovalView<'_>) -> FfiApprovalView {
        FfiApprovalView {
            kind: view.code,
            capability_index: view.capability_index,
            input_json: Some(request.input.to_string()),
            info: view.info.map(Into::into),
            timeout_ms: view.timeout_ms,
        }
    }
}
