"""MCP adapter for the ``mcp`` 2.x SDK (``MCPServer``; ``FastMCP`` is gone).

``governed_tools(registry)`` turns every capability the core exposes on the
``mcp`` surface into an ``MCPServer`` tool; ``create_mcp_server(registry)``
builds a server with them. Each tool:

- is listed from the core's portable descriptor: name, description, input
  and output JSON Schema, and ``ToolAnnotations`` derived by the core from
  the metadata (plus ``adapters.mcp.annotations``);
- runs ``tools/call`` through the governed pipeline on surface ``mcp`` —
  the adapter fixes the surface (SI-2), the caller's ``frame`` factory adds
  the actor and application context, and ``traceparent``/``tracestate`` in
  the request's ``_meta`` travel into the frame;
- maps outcomes to the core's results (as in Node): output as text — a string
  as it is, else compact JSON — (and ``structuredContent`` when
  the tool has an object output schema); a ``CapabilityError`` as an
  ``isError`` result whose text is the core's model-actionable message and
  whose ``_meta["orpc-agent/error"]`` carries code and kind; an approval
  requirement as an ``isError`` result (the tool did not run) whose text
  tells the model what happened and whose
  ``_meta["orpc-agent/approval"]`` carries the request id for the client;
- resumes an approved request when the client calls the tool again with its
  id in the request's ``_meta["orpc-agent/approvalId"]``: the core runs it
  only if it is this tool's, made on MCP by this caller's actor
  (``registry.resume(..., through_tool=...)``), else ``APPROVAL_NOT_FOUND``;
- never lets an exception's text reach the client: an output with no JSON
  form (a serializer that raises, NaN, a cycle) is ``INTERNAL`` "The
  capability's output could not be converted to JSON.", anything else that
  is not a ``CapabilityError`` (the host's ``frame`` factory raising, say)
  is ``INTERNAL`` "The capability failed while running." The operator gets
  the real exception on the ``orpc_agent`` logger.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from mcp.types import (
    CallToolResult,
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    FormElicitationCapability,
    InputRequiredResult,
    ToolAnnotations,
)
from mcp_types.version import is_version_at_least
from pydantic import PrivateAttr

from . import _native
from ._agent_tools import FAILED, OUTPUT_NOT_JSON
from .errors import CapabilityError, InternalError
from .progress import ProgressEvent, on_progress
from .registry import CapabilityRegistry
from .schema import to_jsonable
from .types import ApprovalRequest, ApprovalRequired, Frame

__all__ = ["governed_tools", "create_mcp_server", "GovernedTool", "FrameFactory", "APPROVAL_ID_META"]

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


async def _unused() -> Any:  # pragma: no cover - never called
    """Placeholder the SDK's Tool model requires; governed tools override ``run``."""


_PLACEHOLDER_METADATA = func_metadata(_unused)


def _request_meta(context: Context[Any, Any]) -> dict[str, Any]:
    try:
        meta = context.request_context.meta
    except (AttributeError, ValueError, LookupError):
        return {}
    return dict(meta) if meta else {}


def _mcp_frame(base: Frame | None, context: Context[Any, Any]) -> Frame:
    """The frame of one tools/call: surface ``mcp`` always (SI-2); actor and
    context from the host's factory; trace from the request's ``_meta``."""
    meta = _request_meta(context)
    traceparent = meta.get("traceparent")
    tracestate = meta.get("tracestate")
    try:
        request_id: str | None = str(context.request_id)
    except (AttributeError, ValueError, LookupError):
        request_id = None
    if base is None:
        return Frame(
            "mcp",
            traceparent=traceparent if isinstance(traceparent, str) else None,
            tracestate=tracestate if isinstance(tracestate, str) else None,
            request_id=request_id,
        )
    return Frame(
        "mcp",
        actor=base.actor,
        traceparent=traceparent if isinstance(traceparent, str) else base.traceparent,
        tracestate=tracestate if isinstance(tracestate, str) else base.tracestate,
        request_id=base.request_id or request_id,
        agent_id=base.agent_id,
        session_id=base.session_id,
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


class GovernedTool(Tool):
    """An ``MCPServer`` tool whose calls run the governed pipeline."""

    _registry: CapabilityRegistry = PrivateAttr()
    _capability_id: str = PrivateAttr()
    _output_schema: dict[str, Any] | None = PrivateAttr(default=None)
    _frame: FrameFactory | None = PrivateAttr(default=None)
    _confirm_types: tuple[str, ...] = PrivateAttr(default=())

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self._output_schema

    @classmethod
    def from_descriptor(
        cls,
        registry: CapabilityRegistry,
        descriptor: dict[str, Any],
        frame: FrameFactory | None,
        confirm_in_client: Sequence[str] = (),
    ) -> GovernedTool:
        output_schema = descriptor.get("outputSchema")
        if not (isinstance(output_schema, dict) and output_schema.get("type") == "object"):
            output_schema = None  # MCP structured output must be an object
        tool = cls.model_construct(
            fn=_unused,
            name=descriptor["toolNames"]["mcp"],
            title=None,
            description=descriptor["description"],
            parameters=descriptor["inputSchema"],
            fn_metadata=_PLACEHOLDER_METADATA,
            is_async=True,
            context_kwarg=None,
            resolved_params={},
            resolver_plans={},
            annotations=ToolAnnotations.model_validate(descriptor.get("annotations") or {}),
            icons=None,
            meta=None,
        )
        tool._registry = registry
        tool._capability_id = descriptor["id"]
        tool._output_schema = output_schema
        tool._frame = frame
        tool._confirm_types = tuple(confirm_in_client)
        return tool

    async def run(
        self, arguments: dict[str, Any], context: Context[Any, Any], convert_result: bool = False
    ) -> CallToolResult | InputRequiredResult:
        # Nothing but a result leaves: the SDK would send an exception's
        # text to the client as it is.
        try:
            return await self._call(arguments, context)
        except Exception as e:
            _operator_log(self._capability_id, "the tool call", e)
            return _error_result(InternalError(FAILED))

    async def _call(
        self, arguments: dict[str, Any], context: Context[Any, Any]
    ) -> CallToolResult | InputRequiredResult:
        frame = _mcp_frame(self._frame(context) if self._frame else None, context)
        approval_id = _request_meta(context).get(APPROVAL_ID_META)
        try:
            sender = _progress_sender(context)
            try:
                with on_progress(sender):
                    if isinstance(approval_id, str):
                        # The client names the request id: the core resumes
                        # it only if it is this tool's, made on MCP by this
                        # caller's actor.
                        outcome = await self._registry.resume(approval_id, frame, through_tool=self._capability_id)
                    else:
                        outcome = await self._registry.invoke(self._capability_id, arguments, frame)
            finally:
                await sender.flush()
        except CapabilityError as e:
            return _error_result(e)
        if isinstance(outcome, ApprovalRequired):
            if self._confirm_types:
                try:
                    confirmed = await self._confirm_in_client(outcome.request, frame, context)
                except CapabilityError as e:
                    return _error_result(e)
                if confirmed is not None:
                    return confirmed
            # The core's answer, as in Node: how to run it once approved.
            return CallToolResult.model_validate(_native.mcp_approval_result(outcome.request.raw))
        return self._ok_result(outcome)

    async def _confirm_in_client(
        self, request: ApprovalRequest, frame: Frame, context: Context[Any, Any]
    ) -> CallToolResult | InputRequiredResult | None:
        """In-band confirmation (``confirm_in_client``), as in Node: the core
        says whether this request is put to the person at the client, writes
        the question and says what the answer decides; the decision and the
        single resume are the core's. ``None``: anything short of a decision
        the core recorded; the request stays pending.

        How the question travels is the protocol's: up to 2025-11-25 it is
        an ``elicitation/create`` request sent mid-call; from 2026-07-28 the
        call answers ``InputRequiredResult`` and the client repeats it with
        the person's answer, keyed by the request id. The repeated call
        finds the same pending request (same caller, same input), so the
        answer decides only the request it was asked for; a key that names
        another request (an expired one) is asked again."""
        session = context.session
        client_elicits = session.check_client_capability(
            ClientCapabilities(elicitation=ElicitationCapability(form=FormElicitationCapability()))
        )
        if not _native.mcp_elicits(request.type, list(self._confirm_types), client_elicits):
            return None
        if _elicits_in_result(context):
            # An answer counts only on the round that echoes this request's
            # state (the SDK seals it to this call when configured to).
            given = (context.input_responses or {}).get(request.id) if context.request_state == request.id else None
            if not isinstance(given, ElicitResult):
                message, schema = await self._elicitation(request, frame)
                question = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))
                return InputRequiredResult(input_requests={request.id: question}, request_state=request.id)
            answer: ElicitResult = given
        else:
            message, schema = await self._elicitation(request, frame)
            try:
                # Bounded by the request's own expiry.
                timeout = max(0.001, (request.expires_at - time.time() * 1000) / 1000)
                answer = await asyncio.wait_for(session.elicit_form(message, schema, context.request_id), timeout)
            except Exception as e:  # no answer (timeout, a client error): another approver decides
                _log.info(
                    "orpc_agent: confirmation of %s got no answer in the client (%s)", request.id, type(e).__name__
                )
                return None
        approver = frame.actor_id
        try:
            if _native.mcp_elicitation_approves(answer.action):
                await self._registry.approvals.approve_async(request.id, approver=approver)
            else:
                await self._registry.approvals.reject_async(
                    request.id, approver=approver, reason=_native.mcp_elicitation_declined()
                )
        except CapabilityError:  # the core refused the decision (e.g. approver_must_differ)
            return None
        # Approved: runs once; rejected: the core's APPROVAL_REJECTED.
        resumed = await self._registry.resume(request.id, frame, through_tool=self._capability_id)
        if isinstance(resumed, ApprovalRequired):
            return None
        return self._ok_result(resumed)

    async def _elicitation(self, request: ApprovalRequest, frame: Frame) -> tuple[str, dict[str, Any]]:
        """The core's question: the redacted approval view, cut to a length."""
        view = await self._registry.redact_approval_input(request, context=frame.context)
        params = _native.mcp_elicitation_params(self.name, request.id, request.reason, to_jsonable(view))
        return params["message"], params["requestedSchema"]

    def _ok_result(self, outcome: Any) -> CallToolResult:
        try:
            output = to_jsonable(outcome.output)
            # The core's result (`mcp::ok_result`, as in Node): a string as
            # it is, else compact JSON; `structuredContent` when the tool
            # publishes an object output schema and the output is an object.
            result = _native.mcp_ok_result(output, self._output_schema is not None)
        except Exception as e:  # a serializer that raises, NaN/∞, a cycle
            _operator_log(self._capability_id, "the output's JSON form", e)
            return _error_result(InternalError(OUTPUT_NOT_JSON))
        return CallToolResult.model_validate(result)


# The first MCP revision whose tools/call carries elicitation inside an
# InputRequiredResult instead of a request sent to the client mid-call.
_ELICITATION_IN_RESULT_VERSION = "2026-07-28"


def _elicits_in_result(context: Context[Any, Any]) -> bool:
    version = context.protocol_version
    return version is not None and is_version_at_least(version, _ELICITATION_IN_RESULT_VERSION)


def governed_tools(
    registry: CapabilityRegistry,
    *,
    frame: FrameFactory | None = None,
    include_contextual: bool = False,
    confirm_in_client: Sequence[str] = (),
) -> list[Tool]:
    """One governed tool per capability exposed on the ``mcp`` surface.
    Contextual capabilities are presented only bound to a context, so an
    unbound tool list leaves them out (as Node's adapters and the agent
    framework adapters do); ``include_contextual=True`` lists them too.
    Exposure itself is the core's answer either way.

    ``confirm_in_client``: approval types (e.g. ``"human-confirmation"``)
    whose requests are put to the person at the client through MCP
    elicitation when the client declared that capability: accept records
    the approval (approver: the frame's actor, under
    ``approver_must_differ``) and runs the call once; decline or cancel
    rejects it; no elicitation, a refused decision or no answer before the
    request expires leaves the ordinary approval-required result."""
    return [
        GovernedTool.from_descriptor(registry, d, frame, confirm_in_client)
        for d in registry.descriptors("mcp")
        if include_contextual or d.get("discovery") != "contextual"
    ]


def create_mcp_server(
    registry: CapabilityRegistry,
    name: str = "orpc-agent",
    *,
    frame: FrameFactory | None = None,
    include_contextual: bool = False,
    confirm_in_client: Sequence[str] = (),
    **server_options: Any,
) -> MCPServer[Any]:
    """An ``MCPServer`` serving the registry's MCP-exposed capabilities
    (contextual ones only with ``include_contextual=True``; approvals of the
    ``confirm_in_client`` types answered in the client: see
    ``governed_tools``)."""
    tools = governed_tools(
        registry, frame=frame, include_contextual=include_contextual, confirm_in_client=confirm_in_client
    )
    return MCPServer(name, tools=tools, **server_options)
