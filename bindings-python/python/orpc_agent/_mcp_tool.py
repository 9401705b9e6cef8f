"""``GovernedTool``: an ``MCPServer`` tool whose ``tools/call`` runs the
governed pipeline — invoke, or resume the approved request the client
names, and the in-band confirmation of ``confirm_in_client`` — and answers
with the core's results.

Separate from the listing (``orpc_agent.mcp``: ``governed_tools``,
``create_mcp_server``) and from what a call reads and answers apart from
the tool (``_mcp_call``); ``orpc_agent.mcp`` re-exports it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from mcp.types import (
    CallToolResult,
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequest,
    ElicitRequestFormParams,
    FormElicitationCapability,
    InputRequiredResult,
    ToolAnnotations,
)
from pydantic import PrivateAttr

from . import _native
from ._agent_tools import FAILED, OUTPUT_NOT_JSON
from ._app_errors import APP_FAILURES
from ._mcp_call import (
    APPROVAL_ID_META,
    FrameFactory,
    _elicits_in_result,
    _error_result,
    _log,
    _mcp_frame,
    _operator_log,
    _progress_sender,
    _request_meta,
    approval_id_text,
    asked_by,
)
from ._mcp_confirm import answered_here, decide_and_resume
from .errors import CapabilityError, InternalError
from .progress import on_progress
from .registry import CapabilityRegistry
from .schema import to_jsonable
from .types import ApprovalRequest, ApprovalRequired, Frame


async def _unused() -> Any:  # pragma: no cover - never called
    """Placeholder the SDK's Tool model requires; governed tools override ``run``."""


_PLACEHOLDER_METADATA = func_metadata(_unused)


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
        try:
            base = self._frame(context) if self._frame else None
        except CapabilityError as e:
            # The app's own refusal (CREDENTIAL_REQUIRED: sign in first), in
            # its words, as Node's adapter answers it; any other exception
            # is the call's INTERNAL (``run``).
            return _error_result(e)
        frame = _mcp_frame(base, context)
        approval_id = approval_id_text(_request_meta(context).get(APPROVAL_ID_META))
        if (answered := answered_here(context)) is not None and not isinstance(approval_id, str):
            # The person's answer to the question this call asked decides
            # that request, never a fresh one: a twin call may have run it,
            # an approval UI decided it, meanwhile (``_mcp_confirm``).
            r = await self._registry.approvals.get_async(answered[0])
            # Only a request this tool would put to the person at the client
            # (the SDK also refuses a state it did not issue for this call).
            if r is not None and asked_by(r, frame, self._capability_id) and self._confirmable(r, context):
                try:
                    resumed = await decide_and_resume(self._registry, self._capability_id, r.id, answered[1], frame)
                except CapabilityError as e:
                    return _error_result(e)
                if resumed is None:
                    return CallToolResult.model_validate(_native.mcp_approval_result(r.raw))
                return self._ok_result(resumed)
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
        single resume are the core's. ``None``: no answer, or a decision
        refused under ``approver_must_differ``; the request stays pending. A
        request decided elsewhere meanwhile answers with the core's resume.

        How the question travels is the protocol's: up to 2025-11-25 it is
        an ``elicitation/create`` request sent mid-call; from 2026-07-28 the
        call answers ``InputRequiredResult`` and the client repeats it with
        the person's answer, keyed by the request id, which decides that
        request (this caller's, for this tool) and never a fresh one
        (``_call``, ``_mcp_confirm``)."""
        session = context.session
        if not self._confirmable(request, context):
            return None
        asked = await self._elicitation(request, frame)
        if asked is None:
            return None
        message, schema = asked
        if _elicits_in_result(context):
            # The client repeats the call with the answer keyed by this
            # request's id (its state): ``answered_here`` reads it then.
            question = ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))
            return InputRequiredResult(input_requests={request.id: question}, request_state=request.id)
        try:
            # Bounded by the request's own expiry.
            timeout = max(0.001, (request.expires_at - time.time() * 1000) / 1000)
            answer = await asyncio.wait_for(session.elicit_form(message, schema, context.request_id), timeout)
        except Exception as e:  # no answer (timeout, a client error): another approver decides
            _log.info("orpc_agent: confirmation of %s got no answer in the client (%s)", request.id, type(e).__name__)
            return None
        resumed = await decide_and_resume(self._registry, self._capability_id, request.id, answer, frame)
        return None if resumed is None else self._ok_result(resumed)

    def _confirmable(self, request: ApprovalRequest, context: Context[Any, Any]) -> bool:
        """Whether this tool puts ``request`` to the person at the client (the core's ``mcp::elicits``)."""
        client_elicits = context.session.check_client_capability(
            ClientCapabilities(elicitation=ElicitationCapability(form=FormElicitationCapability()))
        )
        return _native.mcp_elicits(request.type, list(self._confirm_types), client_elicits)

    async def _elicitation(self, request: ApprovalRequest, frame: Frame) -> tuple[str, dict[str, Any]] | None:
        """The core's question: the redacted approval view, cut to a length.
        ``None`` when the view has no JSON form: the person cannot be shown
        it, so nobody is asked here (the request waits, as for a client that
        cannot be asked), the operator is told; not the caller's to fix."""
        view = await self._registry.redact_approval_input(request, context=frame.context)
        try:
            params = _native.mcp_elicitation_params(self.name, request.id, request.reason, to_jsonable(view))
        except APP_FAILURES as e:
            _operator_log(self._capability_id, "the approval view's JSON form", e)
            return None
        return params["message"], params["requestedSchema"]

    def _ok_result(self, outcome: Any) -> CallToolResult:
        try:
            output = to_jsonable(outcome.output)
            # The core's result (`mcp::ok_result`, as in Node): a string as
            # it is, else compact JSON; `structuredContent` when the tool
            # publishes an object output schema and the output is an object.
            result = _native.mcp_ok_result(output, self._output_schema is not None)
        except APP_FAILURES as e:  # a serializer that raises (its own CancelledError too), NaN/∞, a cycle
            _operator_log(self._capability_id, "the output's JSON form", e)
            return _error_result(InternalError(OUTPUT_NOT_JSON))
        return CallToolResult.model_validate(result)
