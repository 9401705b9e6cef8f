//! What `FfiRegistry`'s approval methods work out beyond one core call:
//! the resume a `FfiResumeLimit` selects and the `FfiApprovalView` of a
//! request's input.

use std::sync::Arc;

use orpc_agent_core::approval::ApprovalRequest;
use orpc_agent_core::pipeline::ApprovalInputView;
use orpc_agent_core::{CapabilityRegistry, Frame, Invocation, InvokeOptions};

use super::{FfiApprovalView, FfiResumeLimit};
use crate::FfiError;

impl FfiResumeLimit {
    /// The core invocation that resumes `approval_id` as this limit allows.
    pub(super) fn resume(
        self,
        registry: Arc<CapabilityRegistry>,
        approval_id: &str,
        frame: Frame,
        opts: InvokeOptions,
    ) -> Invocation {
        match self {
            FfiResumeLimit::Trusted => Invocation::resume(registry, approval_id, frame, opts),
            FfiResumeLimit::Requester => {
                Invocation::resume_by_requester(registry, approval_id, frame, opts)
            }
            FfiResumeLimit::ThroughTool { id_or_tool_name } => {
                // A name no capability has can have no request: an index
                // past the last makes the core answer APPROVAL_NOT_FOUND
                // (consuming nothing), as Node's façade does.
                let index = registry
                    .resolve(&id_or_tool_name)
                    .map_or(u32::MAX, |c| c.index);
                Invocation::resume_through_tool(registry, approval_id, index, frame, opts)
            }
        }
    }
}

impl FfiApprovalView {
    /// How an approval UI may show `request`'s input, given the core's
    /// `view` of it.
    pub(super) fn of(
        request: &ApprovalRequest,
        view: ApprovalInputView<'_>,
    ) -> Result<FfiApprovalView, FfiError> {
        Ok(match view {
            ApprovalInputView::AsStored => FfiApprovalView {
                kind: 0,
                capability_index: 0,
                input_json: Some(request.input.to_string()),
                info: None,
            },
            ApprovalInputView::Redact {
                capability_index,
                info,
            } => FfiApprovalView {
                kind: 1,
                capability_index,
                input_json: Some(request.input.to_string()),
                info: Some(info.into()),
            },
            // The capability is gone: the same NOT_FOUND as a call (SI-8).
            ApprovalInputView::Withhold => {
                return Err(
                    orpc_agent_core::pipeline::gate::not_found(&request.capability_id).into(),
                );
            }
        })
    }
}
