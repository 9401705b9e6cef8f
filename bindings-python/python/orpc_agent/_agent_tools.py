"""What the in-process agent-framework adapters share (``openai_agents``,
``pydantic_ai``): conversion only. The core decides; these functions turn
its answers into what a framework hands a model, and keep the core's
approval request ids between the approval turn and the approved re-run.

- The surface is ``aiSdk``: a model's tool call inside an agent loop the
  application runs in process (docs/decisions.md, "Agent frameworks").
  The adapter fixes it (SI-2); the application's frame gives actor,
  session, trace and context.
- What the model reads of a call that returned no output is the text of
  the core's answer (``orpc_agent_core::mcp``, the same words as over MCP):
  ``CODE: message`` and the code's hint. Only the text is taken: these
  frameworks have no ``_meta``.
- Approval request ids wait under the core's key naming the caller (actor
  id, session id), the tool call id and the call itself, the hash of the
  tool and its arguments (``agent_tools::approval_key``, as in Node's
  adapters): tool call ids are unique only within one caller's history,
  and a provider may reuse one for another call. A gated call whose frame names no caller is refused by
  the core before any request is stored (``CREDENTIAL_REQUIRED`` with
  ``details["callerRequired"]``), which these adapters raise to the
  application as ``PrincipalRequiredError``.
"""

from __future__ import annotations

import json
import logging
import weakref
from collections import OrderedDict
from collections.abc import Iterator, MutableMapping
from typing import Any

from . import _native
from .errors import CapabilityError
from .registry import CapabilityRegistry
from .schema import to_jsonable
from .types import ApprovalRequest, Frame

#: The surface every model-driven call of these adapters runs on.
SURFACE = "aiSdk"

#: The output has no JSON form: its text, or an exception's, is not shown
#: (the MCP adapter's and Node's words).
OUTPUT_NOT_JSON: str = _native.AGENT_TOOL_OUTPUT_NOT_JSON
#: Anything but a ``CapabilityError`` went wrong: its text is not shown.
FAILED: str = _native.AGENT_TOOL_FAILED

APPROVAL_META: str = _native.MCP_APPROVAL_META
"""The key under which the core's description of an approval request
travels (PydanticAI's deferred-call metadata)."""

_log = logging.getLogger("orpc_agent")


class PrincipalRequiredError(TypeError):
    """The core refused a gated call because its frame names no caller (no
    actor id and no session id): on surface ``aiSdk`` an approval is kept
    for the caller who asked, and two anonymous callers could not be told
    apart. The call did not run and no request was stored. Give the frame
    the authenticated user's ``actor={"id": ...}`` or the conversation's
    ``session_id``."""

    code = "PRINCIPAL_REQUIRED"

    def __init__(self, tool_name: str) -> None:
        super().__init__(
            f"{tool_name!r} needs approval, but the frame has no actor id and no session id, so the approval "
            "could not be kept for this caller alone. Pass the authenticated user as Frame(actor={'id': ...}) "
            "(or the conversation as session_id). The call did not run."
        )
        self.tool_name = tool_name


class BoundedApprovalIds(MutableMapping[str, str]):
    """The default in-process store of request ids: the most recent
    ``limit`` keys. A key stays after its request ran, so a replayed run
    resumes the same request and the core answers ``APPROVAL_CONSUMED``; an
    evicted key makes a replayed call a new call, which the core gates
    again. Apps serving one conversation from several processes pass a
    shared ``MutableMapping`` of their own."""

    def __init__(self, limit: int = 10_000) -> None:
        self._items: OrderedDict[str, str] = OrderedDict()
        self._limit = limit

    def __getitem__(self, key: str) -> str:
        return self._items[key]

    def __setitem__(self, key: str, value: str) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._limit:
            self._items.popitem(last=False)

    def __delitem__(self, key: str) -> None:
        del self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


_shared_ids: weakref.WeakKeyDictionary[CapabilityRegistry, BoundedApprovalIds] = weakref.WeakKeyDictionary()


def shared_approval_ids(registry: CapabilityRegistry) -> MutableMapping[str, str]:
    """One in-process store per registry, shared by every tool set built
    from it (apps build tool sets per user or per request)."""
    store = _shared_ids.get(registry)
    if store is None:
        store = _shared_ids[registry] = BoundedApprovalIds()
    return store


def model_frame(base: Frame | None, call_id: str | None) -> Frame:
    """The frame of one model tool call: surface ``aiSdk`` always (SI-2);
    the rest from the application's frame; the tool call id as request id
    when the application sets none."""
    if base is None:
        return Frame(SURFACE, request_id=call_id)
    return Frame(
        SURFACE,
        actor=base.actor,
        traceparent=base.traceparent,
        tracestate=base.tracestate,
        request_id=call_id if base.request_id is None else base.request_id,
        agent_id=base.agent_id,
        session_id=base.session_id,
        context=base.context,
    )


def approval_key(frame: Frame | None, call_id: str | None, tool: str, arguments: Any) -> str | None:
    """The core's request-id store key (``agent_tools::approval_key``): the
    caller (actor id, session id), the tool call id, and the call itself
    (the tool and the model's arguments as the framework parsed them,
    hashed by the core: a provider that reuses a call id for another call
    finds nothing under it). ``None`` when the frame names no caller, there
    is no call id, or the arguments are no JSON (nothing is stored or
    looked up then)."""
    actor_id = frame.actor_id if frame is not None else None
    session_id = frame.session_id if frame is not None else None
    try:
        text = json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError):
        return None  # no JSON form: no key
    return _native.agent_tool_approval_key(
        actor_id if isinstance(actor_id, str) else None,
        session_id if isinstance(session_id, str) else None,
        call_id or "",
        tool,
        text,
    )


def caller_required(error: CapabilityError) -> bool:
    """Whether ``error`` is the core's refusal of a gated call whose frame
    names no caller (raised to the application as ``PrincipalRequiredError``)."""
    details = error.details
    return error.code == "CREDENTIAL_REQUIRED" and isinstance(details, dict) and details.get("callerRequired") is True


def error_text(error: CapabilityError) -> str:
    """The core's text for a call that failed (``mcp_error_result``'s)."""
    result = _native.mcp_error_result(error.code, error.message, error.retryable, error.details)
    return str(result["content"][0]["text"])


def approval_required_text(request: ApprovalRequest) -> str:
    """What the model reads when the core asks for approval and the framework
    has no turn for it (a call the framework did not gate first): the core's
    ``APPROVAL_REQUIRED`` text, with the request's reason and id."""
    return _native.agent_tool_approval_required_text(request.id, request.reason)


def approval_meta(request: ApprovalRequest) -> dict[str, Any]:
    """The core's description of a request for a client program (id,
    capability, type, reason, expiry; never the input), less MCP's
    ``resumeWith`` (here the framework's deferred results resume)."""
    meta = dict(_native.mcp_approval_result(request.raw)["_meta"][APPROVAL_META])
    meta.pop("resumeWith", None)
    return meta


def output_value(value: Any) -> Any:
    """The output's JSON value, checked: no ``default``, no NaN/∞. A value
    JSON cannot hold raises (the caller answers ``OUTPUT_NOT_JSON``)."""
    output = to_jsonable(value)
    if isinstance(output, str):
        return output  # a string is its own text (``output_text``), not JSON to read back
    return json.loads(json.dumps(output, allow_nan=False))


def output_text(value: Any) -> str:
    """The output's JSON text (a string output as it is), as the core writes
    it for a model (``mcp::model_text``: compact, numbers as Node's
    ``JSON.stringify`` writes them, ``10.0`` as ``10``): the model reads the
    same text from either."""
    if isinstance(value, str):
        return value
    return _native.model_text(value)


def operator_log(capability_id: str, what: str, exc: BaseException) -> None:
    """The real exception, for the operator only (the model got INTERNAL)."""
    _log.warning(
        "orpc_agent: %s of capability %s failed in an agent tool call; the model was only told that it failed",
        what,
        capability_id,
        exc_info=exc,
    )


async def rejection_text(registry: CapabilityRegistry, request_id: str, frame: Frame, capability_id: str) -> str:
    """What the model reads of a call a human rejected: the core's answer to
    running it now (``APPROVAL_REJECTED``; the resume is refused, audited,
    and consumes nothing)."""
    try:
        await registry.resume(request_id, frame, through_tool=capability_id)
    except CapabilityError as e:
        return error_text(e)
    # Unreachable: a rejected request is never consumed. Fail closed.
    return error_text(CapabilityError("INTERNAL", FAILED))


async def record_approval(
    registry: CapabilityRegistry,
    request_id: str,
    configured: str | None,
    frame: Frame,
    reason: str | None = None,
) -> None:
    """The framework's approval as the core's decision, recorded for the
    configured approver, else the frame's actor
    (``agent_tools::recorded_approver``). Already decided (by an approval
    UI, or the adapter's own helper): the resume that follows reports the
    core's view."""
    approver = _native.agent_tool_recorded_approver(configured, frame.actor_id)
    try:
        await registry.approvals.approve_async(request_id, approver=approver, reason=reason)
    except CapabilityError:
        pass
