//! `FfiRegistry`'s approval types as the core's: the resume limit and the
//! view of a request's input, both decided in the core (`ffi::ResumeLimit`,
//! `ffi::ApprovalView`).

use std::sync::Arc;

use orpc_agent_core::approval::ApprovalRequest;
use orpc_agent_core::ffi::{ApprovalView, ResumeLimit};
use orpc_agent_core::{CapabilityRegistry, Frame, Invocation, InvokeOptions};

use super::{FfiApprovalView, FfiResumeLimit};

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
        }
    }
}
