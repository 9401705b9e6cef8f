//! Who may resume a request, as one value every host names (the tokio
//! driver, and each binding through `ffi`): the core decides what each
//! limit allows.

use std::sync::Arc;

use super::{Answer, Invocation, InvokeOptions, StepKind};
use crate::frame::Frame;
use crate::registry::CapabilityRegistry;

/// Who may resume a request. The core decides what each allows; a binding
/// only names the limit its caller asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResumeLimit<'a> {
    /// Any request (an approval UI, the app): [`Invocation::resume`].
    Trusted,
    /// Only a request the frame's actor made on the frame's surface
    /// ([`Invocation::resume_by_requester`]).
    Requester,
    /// As `Requester`, through one capability's tool (its id or adapter
    /// tool name, as over MCP): only a request for that capability
    /// ([`Invocation::resume_through_tool`]).
    ThroughTool(&'a str),
}

impl<'a> ResumeLimit<'a> {
    /// The limit a caller's two options name, as Node and Python take them:
    /// a tool (`through_tool`) limits to the requester too; else
    /// `by_requester`; else none.
    pub fn from_options(through_tool: Option<&'a str>, by_requester: bool) -> ResumeLimit<'a> {
        match (through_tool, by_requester) {
            (Some(name), _) => ResumeLimit::ThroughTool(name),
            (None, true) => ResumeLimit::Requester,
            (None, false) => ResumeLimit::Trusted,
        }
    }

    /// The invocation that resumes `approval_id` as this limit allows. A
    /// tool name no capability has can have no request: the call ends in
    /// APPROVAL_NOT_FOUND and consumes nothing.
    ///
    /// `cancelled`: the caller was cancelled before the call started (an
    /// aborted signal, a cancelled task). The call ends CANCELLED, audited,
    /// before its consume step runs: the approval stays approved, for a
    /// later resume (a consumed approval whose action never ran is the one
    /// outcome a resume must not have).
    pub fn resume(
        self,
        registry: Arc<CapabilityRegistry>,
        approval_id: &str,
        frame: impl Into<Arc<Frame>>,
        opts: InvokeOptions,
        cancelled: bool,
    ) -> Invocation {
        let now_ms = opts.now_ms;
        let mut inv = self.start(registry, approval_id, frame, opts);
        if cancelled && inv.step().kind() == StepKind::ConsumeApproval {
            // In turn at this step: accepted.
            let _ = inv.answer(Answer::Cancelled { now_ms });
        }
        inv
    }

    fn start(
        self,
        registry: Arc<CapabilityRegistry>,
        approval_id: &str,
        frame: impl Into<Arc<Frame>>,
        opts: InvokeOptions,
    ) -> Invocation {
        match self {
            ResumeLimit::Trusted => Invocation::resume(registry, approval_id, frame, opts),
            ResumeLimit::Requester => {
                Invocation::resume_by_requester(registry, approval_id, frame, opts)
            }
            ResumeLimit::ThroughTool(name) => {
                // No capability has this index: the core finds no request
                // for it.
                let index = registry.resolve(name).map_or(u32::MAX, |c| c.index);
                Invocation::resume_through_tool(registry, approval_id, index, frame, opts)
            }
        }
    }
}
