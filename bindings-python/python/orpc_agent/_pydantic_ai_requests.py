"""Which core request a PydanticAI deferred call stands for: the one kept
for the call here (caller, call id, tool, arguments), or — when none is
kept here (another process) — the one its metadata names, but only if
that request is this caller's for this very call. Deferred-call metadata
comes back from wherever the app kept it and may name another caller's
request, or another call's. Apart from ``_pydantic_ai_toolset.py`` so the
toolset stays whole."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any, NamedTuple

from pydantic_ai.tools import DeferredToolRequests

from . import _native
from ._agent_tools import APPROVAL_META, approval_key, model_frame
from ._native import input_hash
from .types import ApprovalRequest, Frame


class DeferredCall(NamedTuple):
    """A deferred call of the toolset: the request kept for it, the one its
    metadata names, its capability and its arguments."""

    kept: str | None
    named: str | None
    capability_id: str
    args: Any

    @property
    def settled(self) -> bool:
        """Whether ``kept`` is the answer without reading the store (no other request named)."""
        return self.named is None or self.named == self.kept


def deferred_call(
    requests: DeferredToolRequests,
    call_id: str,
    capability_by_tool: Mapping[str, str],
    frame: Frame | None,
    ids: MutableMapping[str, str],
) -> DeferredCall | None:
    """The deferred call ``call_id`` of these tools, or ``None`` (another
    toolset's, or arguments that are no JSON object)."""
    part = next((c for c in requests.approvals if c.tool_call_id == call_id), None)
    capability_id = capability_by_tool.get(part.tool_name) if part is not None else None
    if part is None or capability_id is None:
        return None
    try:
        args = part.args_as_dict(raise_if_invalid=True)
    except (ValueError, AssertionError):
        return None  # arguments that are no JSON object: no key
    key = approval_key(frame, call_id, capability_id, args)
    kept = ids.get(key) if key is not None else None
    return DeferredCall(kept, request_id_of(requests.metadata.get(call_id)), capability_id, args)


def chosen(call: DeferredCall, named: ApprovalRequest | None, frame: Frame | None) -> str | None:
    """``call``'s request given the one its metadata names (read from the
    store): ``kept`` when nothing else is named; the named one only when
    none is kept and it is this caller's for this call; else ``None``."""
    if call.settled:
        return call.kept
    return call.named if call.kept is None and is_request_of(named, frame, call.capability_id, call.args) else None


def is_request_of(request: ApprovalRequest | None, frame: Frame | None, capability_id: str, args: Any) -> bool:
    """Whether ``request`` is this caller's for this call: made for this
    tool by the toolset's caller (``agent_tools::made_for_tool``), its
    input these arguments."""
    return (
        request is not None
        and _native.agent_tool_made_for_tool(request.raw, model_frame(frame, None), capability_id)
        and input_hash(capability_id, request.input) == input_hash(capability_id, args)
    )


def request_id_of(metadata: Any) -> str | None:
    """The request id in a deferred call's metadata, as this adapter wrote it."""
    if not isinstance(metadata, Mapping):
        return None
    meta = metadata.get(APPROVAL_META)
    value = meta.get("requestId") if isinstance(meta, Mapping) else None
    return value if isinstance(value, str) else None
