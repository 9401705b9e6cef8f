"""What one ``tools/call`` of the MCP adapter reads and answers, apart from
the tool: the frame factory's type and the ``_meta`` keys, the call's frame
(surface ``mcp``, trace from the request's ``_meta``), accepted progress as
``notifications/progress``, the core's error result, the operator's log,
and which protocol revision carries elicitation in the result.

Separate from ``GovernedTool`` (``_mcp_tool``) so that the tool's module
holds the steps of a call and little else; ``orpc_agent.mcp`` re-exports
``FrameFactory`` and the ``_meta`` keys.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from mcp_types.version import is_version_at_least

from . import _native
from .errors import CapabilityError
from .progress import ProgressEvent
from .types import ApprovalRequest, Frame

FrameFactory = Callable[[Context[Any, Any]], Frame | None]
"""Builds the caller's frame (actor, context) from the MCP request context."""

APPROVAL_META: str = _native.MCP_APPROVAL_META
"""The result ``_meta`` key of an approval-required answer: the request,
and ``resumeWith`` (how to run it once approved)."""
ERROR_META: str = _native.MCP_ERROR_META
"""The result ``_meta`` key of an error answer: the error's JSON."""
APPROVAL_ID_META: str = _native.MCP_APPROVAL_ID_META
"""The request ``_meta`` key under which a client names an approved request
to resume through the tool it calls (as in the Node adapter)."""


_log = logging.getLogger("orpc_agent")


def _request_meta(context: Context[Any, Any]) -> dict[str, Any]:
    try:
        meta = context.request_context.meta
    except (AttributeError, ValueError, LookupError):
        return {}
    return dict(meta) if meta else {}


def _transport_session(context: Context[Any, Any]) -> str | None:
    """The transport's session id: Streamable HTTP's ``mcp-session-id``,
    which the SDK's transport has matched to a session it issued (as the
    Node adapter takes the SDK's ``extra.sessionId``). None over stdio, in
    memory, and on a stateless server, which issues no session and checks
    no header (the client's own word is not a session)."""
    try:
        headers = getattr(context.request_context.request, "headers", None)  # None over stdio, in memory
        value = headers.get("mcp-session-id") if headers is not None else None
        if not isinstance(value, str) or not value:
            return None
        # Asked only when a header came: a server made without HTTP has no
        # session manager to ask (RuntimeError).
        return None if context.mcp_server.session_manager.stateless else value
    except (AttributeError, ValueError, LookupError, RuntimeError):
        return None


def _text(value: Any) -> bool:
    """Whether ``value`` is a string with a UTF-8 form (no lone surrogate):
    a client's trace field that is not is dropped, as an invalid trace is."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def approval_id_text(value: Any) -> str | None:
    """The approval id a client names in ``_meta``, or ``None``; one with a
    lone surrogate (no UTF-8 form) as its replacement text, which names no
    request (ids are ``apr_`` and hex): the core's APPROVAL_NOT_FOUND, as
    in Node, never an exception."""
    if not isinstance(value, str):
        return None
    return value if _text(value) else value.encode("utf-8", "replace").decode("utf-8")


def _mcp_frame(base: Frame | None, context: Context[Any, Any]) -> Frame:
    """The frame of one tools/call, by Node's rule: surface ``mcp`` always
    (SI-2); actor, context, ids and trace from the host's factory; the
    request's ``_meta`` trace (``traceparent`` with its ``tracestate``)
    only when the factory names none — never one trace's parent with
    another's state; the session the factory names, else the transport's
    (anonymous clients on two sessions are two callers to the core). The
    JSON-RPC request id is unique per connection only, so it is not the
    frame's request id (a factory that wants it in audit records sets
    ``request_id=str(context.request_id)``)."""
    meta = _request_meta(context)
    base = base if base is not None else Frame("mcp")
    traceparent, tracestate = base.traceparent, base.tracestate
    if traceparent is None and _text(meta.get("traceparent")):
        traceparent = meta["traceparent"]
        tracestate = meta.get("tracestate") if _text(meta.get("tracestate")) else None
    return Frame(
        "mcp",
        actor=base.actor,
        traceparent=traceparent,
        tracestate=tracestate,
        request_id=base.request_id,
        agent_id=base.agent_id,
        session_id=base.session_id if base.session_id is not None else _transport_session(context),
        context=base.context,
    )


class _ProgressSender:
    """Accepted progress as ``notifications/progress`` for the client's
    ``progressToken``. Reports may come from an executor thread (sync
    handlers), so each send is scheduled on the loop, in report order;
    ``flush`` waits for them before the result goes out. A failed send is
    ignored (progress is advisory)."""

    def __init__(self, context: Context[Any, Any]) -> None:
        self._context = context
        self._loop = asyncio.get_running_loop()
        self._last: concurrent.futures.Future[None] | None = None

    def __call__(self, event: ProgressEvent) -> None:
        previous = self._last

        async def send() -> None:
            if previous is not None:
                await asyncio.gather(asyncio.wrap_future(previous), return_exceptions=True)
            try:
                await self._context.report_progress(event.done, event.total)
            except Exception:
                pass

        self._last = asyncio.run_coroutine_threadsafe(send(), self._loop)

    async def flush(self) -> None:
        if self._last is not None:  # nothing was reported: nothing to wait for
            await asyncio.gather(asyncio.wrap_future(self._last), return_exceptions=True)


def _progress_sender(context: Context[Any, Any]) -> _ProgressSender:
    """A sender for this tools/call. The SDK's ``report_progress`` sends only
    when the client asked for progress (a ``progressToken`` over JSON-RPC, a
    callback in process) and is a no-op otherwise."""
    return _ProgressSender(context)


def _error_result(e: CapabilityError) -> CallToolResult:
    """The core's answer (``orpc_agent_core::mcp``): the same text, hint and
    ``_meta`` as the Node adapter's."""
    return CallToolResult.model_validate(_native.mcp_error_result(e.code, e.message, e.retryable, e.details))


def _operator_log(capability_id: str, what: str, exc: BaseException) -> None:
    """The real exception, for the operator only (the client got INTERNAL)."""
    _log.warning(
        "orpc_agent: %s of capability %s failed over MCP; the client was only told that it failed",
        what,
        capability_id,
        exc_info=exc,
    )


# The first MCP revision whose tools/call carries elicitation inside an
# InputRequiredResult instead of a request sent to the client mid-call.
_ELICITATION_IN_RESULT_VERSION = "2026-07-28"


def _elicits_in_result(context: Context[Any, Any]) -> bool:
    version = context.protocol_version
    return version is not None and is_version_at_least(version, _ELICITATION_IN_RESULT_VERSION)


def asked_by(r: ApprovalRequest, frame: Frame, capability_id: str) -> bool:
    """Whether ``r`` is this tool's request, made on MCP by this caller
    (the core's rule, ``agent_tools::made_for_tool``: its actor id, or for
    an actor without one the same actor in the same session)."""
    return _native.agent_tool_made_for_tool(r.raw, frame, capability_id)
