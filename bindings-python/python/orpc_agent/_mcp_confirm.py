"""What a person's answer at the MCP client decides (``confirm_in_client``),
written once for both ways the answer travels: mid-call
(``elicitation/create``, up to 2025-11-25) and in the repeated call (MCP
2026-07-28: the answer keyed by the request id the call's state echoes).
The answer decides the request it was asked about — never a fresh one —
and what became of that request is the core's resume through the tool:
run once when accepted and still approvable, else the core's own answer
(a twin call ran it: APPROVAL_CONSUMED; an approval UI rejected it:
APPROVAL_REJECTED). A decline never runs it."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import ElicitResult

from . import _native
from ._mcp_call import _elicits_in_result
from .errors import CapabilityError
from .registry import CapabilityRegistry
from .types import ApprovalRequired, Frame


def answered_here(context: Context[Any, Any]) -> tuple[str, ElicitResult] | None:
    """The request this round answers and the person's answer (MCP
    2026-07-28: the call repeated with the answer keyed by the request id
    its state echoes), else ``None``."""
    state = context.request_state if _elicits_in_result(context) else None
    given = (context.input_responses or {}).get(state) if isinstance(state, str) else None
    return (state, given) if isinstance(state, str) and isinstance(given, ElicitResult) else None


async def decide_and_resume(
    registry: CapabilityRegistry, capability_id: str, request_id: str, answer: ElicitResult, frame: Frame
) -> Any | None:
    """Records the person's answer on ``request_id`` (approver: the frame's
    actor, under ``approver_must_differ``) and resumes it through the tool:
    its outcome, or ``None`` when it still waits for another approver (a
    decision the core refused under ``approver_must_differ``, or a decline
    of a request approved elsewhere: never run for one who declined). The
    resume's refusals (APPROVAL_CONSUMED, _REJECTED, _EXPIRED) raise."""
    approves = _native.mcp_elicitation_approves(answer.action)
    try:
        if approves:
            await registry.approvals.approve_async(request_id, approver=frame.actor_id)
        else:
            await registry.approvals.reject_async(
                request_id, approver=frame.actor_id, reason=_native.mcp_elicitation_declined()
            )
    except CapabilityError as e:
        # Decided elsewhere, expired or gone: what became of it is the
        # core's resume (never a run the person declined); otherwise
        # (approver_must_differ) it waits for another approver.
        if not _native.mcp_refused_decision_resumes(e.code, approves):
            return None
    resumed = await registry.resume(request_id, frame, through_tool=capability_id)
    return None if isinstance(resumed, ApprovalRequired) else resumed
