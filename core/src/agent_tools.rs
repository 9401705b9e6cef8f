//! The rules of the in-process agent-tool adapters (issue 14): Node's AI
//! SDK tools, Python's OpenAI Agents SDK and PydanticAI tools — every
//! adapter on [`Surface::AiSdk`](crate::meta::Surface::AiSdk) whose
//! framework runs an approval turn and then calls the same tool call again.
//! Written once, so each adapter only converts:
//!
//! - an approval is kept for the caller who asked: a gated call on that
//!   surface that names no caller is refused by the machine before any
//!   request is stored ([`Surface::approvals_need_a_caller`],
//!   [`CALLER_REQUIRED_MESSAGE`]);
//! - between the approval turn and the approved re-run, the adapter keeps
//!   the core's request id under [`approval_key`]: the caller, the
//!   framework's tool call id (unique only within one caller's history)
//!   and the hash of the tool and its arguments (the call itself);
//! - what the model reads of a call that needs approval and had no
//!   approval turn ([`approval_required_text`]), of an approval response
//!   this server holds no request for ([`UNKNOWN_APPROVAL_MESSAGE`]), and of
//!   an output with no JSON form ([`OUTPUT_NOT_JSON_MESSAGE`]).
//!
//! [`Surface::approvals_need_a_caller`]: crate::meta::Surface::approvals_need_a_caller

use crate::frame::named;
use crate::mcp;

// What the machine refuses a gated call that names no caller with (the
// pipeline's words, here where the adapters read them).
pub use crate::pipeline::gate::{CALLER_REQUIRED_MESSAGE, caller_required_details};

/// APPROVAL_NOT_FOUND's message when a framework's history shows an approval
/// response for a tool call this server holds no request for (a forged or
/// another caller's response, or one whose key was evicted).
pub const UNKNOWN_APPROVAL_MESSAGE: &str = "No approval request of this server matches this call.";

/// APPROVAL_NOT_FOUND's message when an interruption a framework hands
/// back (OpenAI Agents' approval item) names no request of these tools.
pub const UNKNOWN_INTERRUPTION_MESSAGE: &str =
    "No approval request of these tools matches this interruption.";

/// INTERNAL's message when an adapter met anything but a capability error
/// (an exception of the app's frame function, of a serializer): its text
/// is not shown.
pub const FAILED_MESSAGE: &str = crate::error::FAILED_MESSAGE;

/// INTERNAL's message when a handler's output has no JSON form: its text,
/// or the converter's exception, is not shown.
pub const OUTPUT_NOT_JSON_MESSAGE: &str = "The capability's output could not be converted to JSON.";

/// Whether `request` is one a tool call under `frame` may take as its own —
/// resume, decide, or show: for `capability_id`, made on the frame's
/// surface by the frame's actor id, or, for an actor without an id, by an
/// identical actor in the same session. The rule a resume through a tool
/// applies ([`Requester::for_tool`]), for an adapter that must pick a
/// request before it resumes one (a request id a framework's metadata
/// names, which may be another caller's).
///
/// [`Requester::for_tool`]: crate::approval::Requester::for_tool
pub fn made_for_tool(
    request: &crate::approval::ApprovalRequest,
    frame: &crate::frame::Frame,
    capability_id: &str,
) -> bool {
    let mut frame = frame.clone();
    frame.drop_empty_ids(); // stage 3's rule: an empty id names nobody
    crate::approval::Requester::for_tool(
        frame.surface,
        &frame.actor,
        frame.session_id.as_deref(),
        capability_id,
    )
    .made(request)
}

/// The key under which an adapter keeps a request id between the approval
/// turn and the approved re-run: the caller (actor id, session id), the
/// tool call id, and the call itself — the hash of the tool (its
/// capability id, or the tool name the adapter knows it by: the same each
/// time) and the model's arguments ([`crate::act::input_hash`] of
/// `arguments_json`), as JSON text. A provider that reuses a call id for another tool or other
/// arguments so finds no request under it, and is asked afresh: the
/// request kept for the first call never answers for (or, approved, runs
/// in place of) the second, which a person may have approved as shown.
/// `None` when the frame names no caller (an empty id names none), the
/// call has no id, or the arguments are no JSON (or cannot be hashed):
/// nothing is kept or looked up then (a key without a caller would be
/// shared by every anonymous user).
pub fn approval_key(
    actor_id: Option<&str>,
    session_id: Option<&str>,
    tool_call_id: &str,
    tool: &str,
    arguments_json: &str,
) -> Option<String> {
    let (actor_id, session_id) = (named(actor_id), named(session_id));
    if (actor_id.is_none() && session_id.is_none()) || tool_call_id.is_empty() {
        return None;
    }
    let arguments: serde_json::Value = serde_json::from_str(arguments_json).ok()?;
    let call = crate::act::input_hash(tool, &arguments).ok()?;
    Some(serde_json::json!([actor_id, session_id, tool_call_id, call]).to_string())
}

/// What the model reads when the core asks for approval of a call the
/// framework did not gate first (no approval turn): the APPROVAL_REQUIRED
/// error text with its hint, the request's reason (or the default) and its
/// id. The call did not run.
pub fn approval_required_text(request_id: &str, reason: Option<&str>) -> String {
    let reason = reason
        .filter(|r| !r.trim().is_empty())
        .unwrap_or(mcp::DEFAULT_REASON);
    format!(
        "APPROVAL_REQUIRED: {reason} Approval request {request_id} is waiting for a human decision; the call did not run."
    )
}

/// Whether a framework's own approval gate (the AI SDK 7 call-level
/// `toolApproval`) shows a call that ended in `code` as *denied* — the
/// model reads the reason and the tool is not executed — rather than
/// letting `execute` report the error. Only a policy's refusal is a
/// denial: the call was not allowed. Every other error (invalid input, not
/// found, a handler's failure) is the tool's answer, reported as such.
pub fn gate_denies(code: &str) -> bool {
    code == crate::ErrorCode::PolicyDenied.as_str()
}

/// Who an adapter records as the approver when the framework's approval
/// turn approves or rejects a call: the approver the application
/// configured, else the frame's actor (the user who answered the turn),
/// else nobody. An empty name names nobody, in every binding (JavaScript's
/// `??` and Python's `or` disagree on `""`).
pub fn recorded_approver<'a>(
    configured: Option<&'a str>,
    actor_id: Option<&'a str>,
) -> Option<&'a str> {
    named(configured).or(named(actor_id))
}

/// What an adapter does with the request it kept for a tool call when the
/// framework asks again whether that call needs approval (the OpenAI
/// Agents SDK does for every call its run state has not decided: a resumed
/// run, or a saved state replayed), by whether it kept an id for the call
/// (`kept`), the request's status (`None`: the store has no such request)
/// and whether it is a request for the tool's own capability
/// (`same_capability`: a provider that reuses call ids may present another
/// tool under a kept id, and that call is not this one).
///
/// - pending, or approved and not yet run: [`KeptRequest::Holds`] — "needs
///   approval" with the same request, not a second one;
/// - consumed or rejected: [`KeptRequest::Decided`] — the call was run or
///   refused once already (a replay of a saved state): the adapter settles
///   it with the core's answer to resuming that request (APPROVAL_CONSUMED,
///   APPROVAL_REJECTED, audited) and opens no second request, which a
///   person shown the replay could approve and so run the call twice;
/// - kept, but the store has no such request any more: also
///   [`KeptRequest::Decided`] (the resume answers APPROVAL_NOT_FOUND) — a
///   memory store drops consumed requests after a day, and a call run then
///   replayed must not be asked (and run) again;
/// - no id kept, expired, unknown, or another capability's:
///   [`KeptRequest::Afresh`] — nobody decided this call: it is asked of
///   the core again.
pub fn kept_request(kept: bool, status: Option<&str>, same_capability: bool) -> KeptRequest {
    if kept && status.is_none() {
        return KeptRequest::Decided;
    }
    if !same_capability {
        return KeptRequest::Afresh;
    }
    match status {
        Some("pending" | "approved") => KeptRequest::Holds,
        Some("consumed" | "rejected") => KeptRequest::Decided,
        _ => KeptRequest::Afresh,
    }
}

/// Whether a request an adapter resumed may still run after that resume
/// ended in `code` (`None`: ok), so the adapter keeps its id for the
/// approval answered again: the resume ended before the core consumed it —
/// the request still pending (another approval UI decides), the call
/// cancelled, a store that failed or did not answer in time. After an ok
/// resume or any other error the request was consumed, rejected, expired
/// or is gone: its id is forgotten (an app's own store does not grow; a
/// replay would only meet the core's refusal). (A frame past its limits,
/// INVALID_INPUT before the consume, cannot meet an adapter's resume: it
/// resumes with the frame its gated call was made with, which passed.)
pub fn resume_may_run_again(code: Option<&str>) -> bool {
    matches!(
        code,
        Some("APPROVAL_PENDING" | "CANCELLED" | "INTERNAL" | "TIMEOUT")
    )
}

/// See [`kept_request`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeptRequest {
    Holds,
    Decided,
    Afresh,
}

impl KeptRequest {
    /// The name a binding's adapter reads: `holds`, `decided`, `afresh`.
    pub fn as_str(self) -> &'static str {
        match self {
            KeptRequest::Holds => "holds",
            KeptRequest::Decided => "decided",
            KeptRequest::Afresh => "afresh",
        }
    }
}

/// What a framework's preliminary tool result shows while a call runs (the
/// AI SDK's streamed partial results): the call's progress as the core
/// accepted it (`done`, `total`), never a value a streaming handler
/// yielded. Yields are neither validated nor redacted; only the final
/// output is, and it alone reaches the model.
pub fn preliminary_result(done: u64, total: Option<u64>) -> serde_json::Value {
    let mut progress = serde_json::json!({ "done": done });
    if let Some(total) = total {
        progress["total"] = total.into();
    }
    serde_json::json!({ "status": "running", "progress": progress })
}

/// The constants an adapter shows, for a binding's module:
/// `{unknownApproval, unknownInterruption, outputNotJson, failed}`.
pub fn messages() -> serde_json::Value {
    serde_json::json!({
        "unknownApproval": UNKNOWN_APPROVAL_MESSAGE,
        "unknownInterruption": UNKNOWN_INTERRUPTION_MESSAGE,
        "outputNotJson": OUTPUT_NOT_JSON_MESSAGE,
        "failed": FAILED_MESSAGE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_a_tool_calls_own_only_for_its_tool_surface_and_caller() {
        use crate::approval::ApprovalRequest;
        use crate::frame::{Actor, Frame};
        use crate::meta::Surface;
        let actor = |id: Option<&str>| Actor {
            id: id.map(str::to_owned),
            ..Actor::default()
        };
        let made = |surface, who: Option<&str>, session: Option<&str>| {
            ApprovalRequest::new(
                "pay.send",
                serde_json::json!({}),
                "h",
                surface,
                actor(who),
                None,
                None,
                0,
                1,
            )
            .with_session_id(session.map(str::to_owned))
        };
        let frame = |surface, who: Option<&str>, session: Option<&str>| Frame {
            session_id: session.map(str::to_owned),
            ..Frame::new(surface).with_actor(actor(who))
        };
        let ann = frame(Surface::AiSdk, Some("ann"), Some("s1"));
        assert!(made_for_tool(
            &made(Surface::AiSdk, Some("ann"), None),
            &ann,
            "pay.send"
        ));
        assert!(
            !made_for_tool(&made(Surface::AiSdk, Some("ann"), None), &ann, "pay.other"),
            "another tool"
        );
        assert!(
            !made_for_tool(&made(Surface::Mcp, Some("ann"), None), &ann, "pay.send"),
            "another surface"
        );
        assert!(
            !made_for_tool(&made(Surface::AiSdk, Some("bob"), None), &ann, "pay.send"),
            "another caller"
        );
        // Without an id: the same (empty) actor in the same session; an empty id names nobody.
        let anonymous = frame(Surface::Mcp, Some(""), Some("s1"));
        assert!(made_for_tool(
            &made(Surface::Mcp, None, Some("s1")),
            &anonymous,
            "pay.send"
        ));
        assert!(
            !made_for_tool(
                &made(Surface::Mcp, None, Some("s2")),
                &anonymous,
                "pay.send"
            ),
            "another session"
        );
    }

    #[test]
    fn a_preliminary_result_is_progress_only() {
        assert_eq!(
            preliminary_result(2, Some(5)),
            serde_json::json!({"status": "running", "progress": {"done": 2, "total": 5}})
        );
        assert_eq!(
            preliminary_result(1, None),
            serde_json::json!({"status": "running", "progress": {"done": 1}})
        );
    }

    #[test]
    fn a_kept_request_holds_its_call_until_decided_and_answers_it_after() {
        for (status, step) in [
            (Some("pending"), KeptRequest::Holds),
            (Some("approved"), KeptRequest::Holds),
            (Some("consumed"), KeptRequest::Decided),
            (Some("rejected"), KeptRequest::Decided),
            (Some("expired"), KeptRequest::Afresh),
            (Some("Pending"), KeptRequest::Afresh),
            (Some(""), KeptRequest::Afresh),
        ] {
            assert_eq!(kept_request(true, status, true), step, "{status:?}");
            assert_eq!(
                kept_request(true, status, false),
                KeptRequest::Afresh,
                "{status:?}"
            );
        }
        // Nothing kept: asked afresh. Kept, and gone from the store: never again.
        assert_eq!(kept_request(false, None, false), KeptRequest::Afresh);
        assert_eq!(kept_request(true, None, false), KeptRequest::Decided);
    }

    #[test]
    fn a_resume_that_ended_before_the_consume_leaves_its_request_to_run_again() {
        for code in ["APPROVAL_PENDING", "CANCELLED", "INTERNAL", "TIMEOUT"] {
            assert!(resume_may_run_again(Some(code)), "{code}");
        }
        for code in [
            None,
            Some("APPROVAL_CONSUMED"),
            Some("APPROVAL_REJECTED"),
            Some("APPROVAL_EXPIRED"),
            Some("APPROVAL_NOT_FOUND"),
            Some("EXECUTION_FAILED"),
            Some("INVALID_INPUT"),
        ] {
            assert!(!resume_may_run_again(code), "{code:?}");
        }
    }

    #[test]
    fn the_recorded_approver_is_the_configured_one_else_the_actor() {
        assert_eq!(recorded_approver(Some("ops"), Some("ana")), Some("ops"));
        assert_eq!(recorded_approver(Some(""), Some("ana")), Some("ana"));
        assert_eq!(recorded_approver(None, Some("ana")), Some("ana"));
        assert_eq!(recorded_approver(None, Some("")), None);
        assert_eq!(recorded_approver(None, None), None);
    }

    #[test]
    fn a_key_names_the_caller_and_the_call() {
        let key = |actor, session, call: &str| approval_key(actor, session, call, "t", "{}");
        let hash = crate::act::input_hash("t", &serde_json::json!({})).unwrap();
        assert_eq!(
            key(Some("u1"), None, "call_1").as_deref(),
            Some(format!(r#"["u1",null,"call_1","{hash}"]"#).as_str())
        );
        assert_eq!(
            key(None, Some("s"), "c").as_deref(),
            Some(format!(r#"[null,"s","c","{hash}"]"#).as_str())
        );
        assert_eq!(key(None, None, "c"), None);
        assert_eq!(key(Some("u1"), None, ""), None);
        assert_eq!(key(Some(""), Some(""), "c"), None);
        // Ids that contain the separator cannot collide: JSON quotes them.
        assert_ne!(
            key(Some("a\",\"b"), None, "c"),
            key(Some("a"), Some("b"), "c")
        );
    }

    #[test]
    fn a_key_is_the_call_s_own_a_reused_call_id_with_another_tool_or_arguments_is_another_key() {
        let key = |capability: &str, arguments: &str| {
            approval_key(Some("u1"), None, "call_0", capability, arguments)
        };
        let first = key("pay.send", r#"{"to":"bob","amount":10}"#);
        assert!(first.is_some());
        // The same call again (a replayed run state): the same key, whatever
        // the order of its keys or the form of its numbers.
        assert_eq!(key("pay.send", r#"{"amount":10.0,"to":"bob"}"#), first);
        assert_ne!(key("pay.send", r#"{"to":"eve","amount":10}"#), first);
        assert_ne!(key("pay.refund", r#"{"to":"bob","amount":10}"#), first);
        // No JSON: no key, nothing kept or found.
        assert_eq!(key("pay.send", "{"), None);
        assert_eq!(key("pay.send", "NaN"), None);
    }

    #[test]
    fn only_a_policy_refusal_is_a_denial_at_the_gate() {
        assert!(gate_denies("POLICY_DENIED"));
        for code in [
            "INVALID_INPUT",
            "NOT_FOUND",
            "EXECUTION_FAILED",
            "APPROVAL_REJECTED",
            "",
        ] {
            assert!(!gate_denies(code), "{code}");
        }
    }

    #[test]
    fn the_approval_text_has_the_reason_or_the_default() {
        assert_eq!(
            approval_required_text("r1", Some("Manager sign-off.")),
            "APPROVAL_REQUIRED: Manager sign-off. Approval request r1 is waiting for a human \
             decision; the call did not run."
        );
        assert!(approval_required_text("r1", Some("  ")).contains(mcp::DEFAULT_REASON));
        assert!(approval_required_text("r1", None).contains(mcp::DEFAULT_REASON));
    }
}
