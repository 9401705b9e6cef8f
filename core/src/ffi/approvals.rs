//! The two approval operations every binding used to spell out itself:
//! which core resume a caller's limit selects (`pipeline::ResumeLimit`,
//! re-exported here), and how an approval UI may show a request's input —
//! one encoding, decided here once.

use super::BindingRegistry;
use crate::approval::ApprovalRequest;
use crate::error::CapabilityError;
use crate::pipeline::ApprovalInputView;
use crate::pipeline::RedactionInfo;
pub use crate::pipeline::ResumeLimit;

/// The codes of [`ApprovalView::code`], mirrored in the generated protocol
/// files and Python's module.
pub mod approval_view_code {
    /// Show the request's input as stored.
    pub const AS_STORED: u8 = 0;
    /// Show what the capability's `redact.approvalInput` makes of it, given
    /// [`ApprovalView::info`](super::ApprovalView::info).
    pub const REDACT: u8 = 1;

    /// Every code with its name, in order.
    pub const ALL: [(u8, &str); 2] = [(AS_STORED, "AsStored"), (REDACT, "Redact")];
}

/// How an approval UI may show a request's input.
#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalView<'a> {
    /// One of [`approval_view_code`].
    pub code: u8,
    /// The capability whose redactor runs (`REDACT`); 0 otherwise.
    pub capability_index: u32,
    /// What the redactor is told: the request's recorded surface and actor
    /// (`REDACT`); `None` otherwise.
    pub info: Option<RedactionInfo<'a>>,
    /// How long the redactor may take (`REDACT`: the capability's timeout;
    /// past it the view fails as a throwing redactor's does); 0 otherwise.
    pub timeout_ms: u64,
}

impl BindingRegistry {
    /// How an approval UI may show `request`'s input, as a code; a request
    /// whose capability this registry does not serve is the core's
    /// NOT_FOUND (`pipeline::approval_input_redaction`).
    pub fn approval_view<'a>(
        &self,
        request: &'a ApprovalRequest,
    ) -> Result<ApprovalView<'a>, CapabilityError> {
        match crate::pipeline::approval_input_redaction(self.registry(), request)? {
            ApprovalInputView::AsStored => Ok(ApprovalView {
                code: approval_view_code::AS_STORED,
                capability_index: 0,
                info: None,
                timeout_ms: 0,
            }),
            ApprovalInputView::Redact {
                capability_index,
                info,
                timeout_ms,
            } => Ok(ApprovalView {
                code: approval_view_code::REDACT,
                capability_index,
                info: Some(info),
                timeout_ms,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::approval::Decision as ApprovalDecision;
    use crate::error::ErrorCode;
    use crate::ffi::StoreConfig;
    use crate::pipeline::{Invocation, InvokeOptions, Outcome, Payload, StepKind};
    use crate::{Actor, Frame, Surface};

    fn actor(id: &str) -> Actor {
        Actor {
            id: Some(id.into()),
            ..Actor::default()
        }
    }

    /// A request for `orders.cancel` (approval required), made by `ann` over
    /// MCP and approved.
    fn approved() -> (BindingRegistry, ApprovalRequest) {
        // `notes.delete` has an approval-input redactor (the host holds it).
        let decls = json!([{"id": "orders.cancel", "meta": {
            "description": "Cancel.", "expose": {"direct": true, "mcp": true},
            "sideEffect": "destructive", "risk": "medium", "approval": {"required": true}},
            "validateInput": false},
            {"id": "notes.delete", "meta": {"description": "Delete.", "expose": {"mcp": true},
            "sideEffect": "destructive", "risk": "high", "approval": {"required": true},
            "redact": {"approvalInput": true}}, "hostHooks": {"redactApprovalInput": true}}]);
        let store = StoreConfig::Memory.open_sync().unwrap();
        let host = BindingRegistry::build(&decls, &json!({}), store).unwrap();
        let frame = Frame::new(Surface::Mcp).with_actor(actor("ann"));
        let req = approved_by(&host, frame);
        (host, req)
    }

    /// A request for `orders.cancel` made with `frame`, approved.
    fn approved_by(host: &BindingRegistry, frame: Frame) -> ApprovalRequest {
        let mut inv = Invocation::start(
            Arc::clone(host.registry()),
            "orders.cancel",
            Payload::Json(json!({"order": 42})),
            frame,
            InvokeOptions::at(1_000),
        );
        assert_eq!(host.advance(&mut inv, 1_000), StepKind::Done);
        let Some(Outcome::ApprovalRequired(req)) = inv.take_outcome() else {
            panic!("expected an approval request")
        };
        host.decide(
            &req.id,
            ApprovalDecision::Approve,
            Some("boss"),
            None,
            2_000,
        )
        .unwrap();
        *req
    }

    /// What resuming the request under `limit`, as `frame`, ends in: the
    /// step the host is asked for, or the error code.
    fn resumed(
        host: &BindingRegistry,
        id: &str,
        limit: ResumeLimit<'_>,
        frame: Frame,
    ) -> Result<StepKind, ErrorCode> {
        resumed_unless(host, id, limit, frame, false)
    }

    /// `resumed`, by a caller already cancelled or not.
    fn resumed_unless(
        host: &BindingRegistry,
        id: &str,
        limit: ResumeLimit<'_>,
        frame: Frame,
        cancelled: bool,
    ) -> Result<StepKind, ErrorCode> {
        let opts = InvokeOptions::at(3_000);
        let mut inv = limit.resume(Arc::clone(host.registry()), id, frame, opts, cancelled);
        match host.advance(&mut inv, 3_000) {
            StepKind::Done => match inv.take_outcome() {
                Some(Outcome::Error(e)) => Err(e.code),
                other => panic!("unexpected outcome {other:?}"),
            },
            kind => Ok(kind),
        }
    }

    #[test]
    fn a_tool_limits_a_resume_to_the_requester_too() {
        let from = ResumeLimit::from_options;
        assert_eq!(from(Some("t"), false), ResumeLimit::ThroughTool("t"));
        assert_eq!(from(Some("t"), true), ResumeLimit::ThroughTool("t"));
        assert_eq!(from(None, true), ResumeLimit::Requester);
        assert_eq!(from(None, false), ResumeLimit::Trusted);
    }

    #[test]
    fn a_tool_no_capability_has_resumes_nothing() {
        let (host, req) = approved();
        let ann = || Frame::new(Surface::Mcp).with_actor(actor("ann"));
        let through = |name| resumed(&host, &req.id, ResumeLimit::ThroughTool(name), ann());
        assert_eq!(through("no.such.tool"), Err(ErrorCode::ApprovalNotFound));
        // Another capability's tool, or another actor even through the
        // right tool or as the requester, finds nothing either.
        assert_eq!(through("notes.delete"), Err(ErrorCode::ApprovalNotFound));
        let bob = || Frame::new(Surface::Mcp).with_actor(actor("bob"));
        for limit in [
            ResumeLimit::ThroughTool("orders.cancel"),
            ResumeLimit::Requester,
        ] {
            assert_eq!(
                resumed(&host, &req.id, limit, bob()),
                Err(ErrorCode::ApprovalNotFound)
            );
        }
        // Nothing was consumed: the requester's own resume runs the handler.
        assert_eq!(through("orders.cancel"), Ok(StepKind::RunHandler));
    }

    #[test]
    fn an_empty_actor_id_resumes_through_the_tool_as_the_actor_without_one_it_is() {
        let (host, _) = approved();
        let nobody = || {
            Frame::new(Surface::Mcp).with_actor(Actor {
                id: Some(String::new()),
                ..Actor::default()
            })
        };
        let req = approved_by(&host, nobody());
        assert_eq!(req.actor.id, None, "stage 3: an empty id is none");
        let tool = ResumeLimit::ThroughTool("orders.cancel");
        assert_eq!(
            resumed(&host, &req.id, tool, nobody()),
            Ok(StepKind::RunHandler)
        );
    }

    #[test]
    fn a_caller_cancelled_before_a_resume_consumes_nothing() {
        let (host, req) = approved();
        let ann = || Frame::new(Surface::Mcp).with_actor(actor("ann"));
        for limit in [
            ResumeLimit::Trusted,
            ResumeLimit::Requester,
            ResumeLimit::ThroughTool("orders.cancel"),
        ] {
            assert_eq!(
                resumed_unless(&host, &req.id, limit, ann(), true),
                Err(ErrorCode::Cancelled),
                "{limit:?}"
            );
        }
        // Still approved: the next resume runs the handler.
        assert_eq!(
            resumed(&host, &req.id, ResumeLimit::Trusted, ann()),
            Ok(StepKind::RunHandler)
        );
        // A resume that finds nothing still says so, cancelled or not.
        let nothing = ResumeLimit::ThroughTool("no.such.tool");
        assert_eq!(
            resumed_unless(&host, &req.id, nothing, ann(), true),
            Err(ErrorCode::ApprovalNotFound)
        );
    }

    #[test]
    fn an_input_is_shown_as_stored_redacted_or_not_at_all() {
        let (host, mut req) = approved();
        let view = host.approval_view(&req).unwrap();
        assert_eq!(view.code, approval_view_code::AS_STORED);
        assert_eq!(view.info, None);
        // A capability with an approval-input redactor: the request's
        // recorded surface and actor, never a viewer's.
        req.capability_id = "notes.delete".into();
        let view = host.approval_view(&req).unwrap();
        assert_eq!(view.code, approval_view_code::REDACT);
        assert_eq!(view.capability_index, 1);
        let info = view.info.unwrap();
        assert_eq!(
            (info.surface, info.capability_id),
            (Surface::Mcp, "notes.delete")
        );
        assert_eq!(info.actor.id.as_deref(), Some("ann"));
        req.capability_id = "gone".into();
        let withheld = host.approval_view(&req).unwrap_err();
        assert_eq!(withheld.code, ErrorCode::NotFound);
    }
}
