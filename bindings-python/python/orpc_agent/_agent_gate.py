"""A tool call an agent framework asks about, answered from the request
kept for it (OpenAI Agents' gate, PydanticAI's toolset): written once, so
both adapters only say what the answer means in their framework."""

from __future__ import annotations

from typing import Any

from . import _native
from ._handler_hold import HandlerHold
from .registry import CapabilityRegistry
from .types import ApprovalRequest, ApprovalRequired, Frame, InvokeOk


async def asked_again(
    registry: CapabilityRegistry,
    kept: str | None,
    capability_id: str,
    arguments: Any,
    frame: Frame,
    held: HandlerHold | None = None,
) -> ApprovalRequest | InvokeOk[Any] | ApprovalRequired:
    """What the core says of the call, given the request id kept under its
    key (``agent_tools::kept_request``): undecided, the kept request itself
    (hold the call on it, never a second one); run or refused once already,
    or gone from the store, the core's resume of it (it raises
    ``APPROVAL_CONSUMED`` / ``APPROVAL_REJECTED`` / ``APPROVAL_NOT_FOUND``,
    audited) — never a second request a person could approve, running the
    call twice; otherwise the call asked afresh (held
    before its handler by ``held``, when given: ``_handler_hold``)."""
    request = await registry.approvals.get_async(kept) if kept is not None else None
    step = _native.agent_tool_kept_request(
        kept is not None,
        request.status if request is not None else None,
        request is not None and request.capability_id == capability_id,
    )
    if request is not None and step == "holds":
        return request
    if kept is not None and step == "decided":
        return await registry.resume(kept, frame, through_tool=capability_id)
    if held is not None:
        return await registry._invoke_to_handler(capability_id, arguments, frame, held)  # type: ignore[no-any-return]
    return await registry.invoke(capability_id, arguments, frame)
