"""``GovernedToolset``: the governed tools of one caller as a PydanticAI
toolset — each call runs the governed pipeline once (an output, the core's
error as ``ToolFailed``, an approval requirement as a deferred call) — and
the answers to their deferred approvals (``answer``).

Separate from ``governed_toolset`` (``orpc_agent.pydantic_ai``), which
re-exports it with ``APPROVAL_META`` and ``PrincipalRequiredError``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, MutableMapping
from typing import Any

from pydantic_ai import ApprovalRequired as DeferForApproval
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDefinition, ToolDenied
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from . import _native
from ._agent_gate import asked_again
from ._agent_tools import APPROVAL_META as APPROVAL_META
from ._agent_tools import (
    FAILED,
    OUTPUT_NOT_JSON,
    approval_key,
    approval_meta,
    approval_required_text,
    caller_required,
    error_text,
    model_frame,
    operator_log,
    output_value,
    record_approval,
    rejection_text,
    shared_approval_ids,
)
from ._agent_tools import PrincipalRequiredError as PrincipalRequiredError
from ._app_errors import APP_FAILURES
from ._pydantic_ai_requests import DeferredCall, chosen, deferred_call, request_id_of
from .errors import ApprovalNotFoundError, CapabilityError, InternalError
from .registry import CapabilityRegistry
from .types import ApprovalRequest, ApprovalRequired, Frame

#: Arguments go to the core as the model sent them.
_ANY = SchemaValidator(core_schema.any_schema())


class GovernedToolset(AbstractToolset[Any]):
    """The governed tools of one caller, and the answers to their approvals."""

    def __init__(
        self,
        registry: CapabilityRegistry,
        frame: Frame | None = None,
        *,
        id: str | None = None,
        approver: str | None = None,
        decide_approvals: bool = True,
        approval_ids: MutableMapping[str, str] | None = None,
    ) -> None:
        self.registry = registry
        self.frame = frame
        self._id = id
        self._approver = approver
        self._decide = decide_approvals
        self._ids = approval_ids if approval_ids is not None else shared_approval_ids(registry)
        self._defs: dict[str, ToolDefinition] = {}
        self._capability_by_tool: dict[str, str] = {}
        for d in registry.descriptors("aiSdk"):
            if d.get("discovery") == "contextual":
                continue
            name: str = d["toolNames"]["aiSdk"]
            self._capability_by_tool[name] = d["id"]
            self._defs[name] = ToolDefinition(
                name=name,
                description=d["description"],
                parameters_json_schema=d["inputSchema"],
            )

    @property
    def id(self) -> str | None:
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {
            name: ToolsetTool(toolset=self, tool_def=tool_def, max_retries=0, args_validator=_ANY)
            for name, tool_def in self._defs.items()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        capability_id = self._capability_by_tool[name]
        try:
            return await self._call(name, capability_id, tool_args, ctx)
        except (ToolFailed, DeferForApproval, PrincipalRequiredError, asyncio.CancelledError):
            raise
        except Exception as e:
            # Nothing else leaves: PydanticAI would end the run on it.
            operator_log(capability_id, "the tool call", e)
            raise ToolFailed(error_text(InternalError(FAILED))) from None

    async def _call(self, name: str, capability_id: str, args: Any, ctx: RunContext[Any]) -> Any:
        call_id = ctx.tool_call_id
        frame = model_frame(self.frame, call_id)
        key = approval_key(self.frame, call_id, capability_id, args)
        try:
            if ctx.tool_call_approved:
                request_id = await self._approved_request(capability_id, args, key, ctx.tool_call_metadata)
                if request_id is not None:
                    # The approved call: the core's request, resumed once.
                    if self._decide:
                        await record_approval(self.registry, request_id, self._approver, frame)
                    outcome = await self.registry.resume(request_id, frame, through_tool=capability_id)
                else:
                    outcome = await self.registry.invoke(capability_id, args, frame)
            else:
                # The same call again (a retry, a history run again): what its
                # kept request means is the core's (`kept_request`): undecided,
                # that request, not a new one; run or refused once already,
                # the core's answer to resuming it — never a second request a
                # person could approve, running the call twice.
                kept = self._ids.get(key) if key is not None else None
                answer = await asked_again(self.registry, kept, capability_id, args, frame)
                if isinstance(answer, ApprovalRequest):
                    raise DeferForApproval(metadata={APPROVAL_META: approval_meta(answer)})
                outcome = answer
        except CapabilityError as e:
            if caller_required(e):
                raise PrincipalRequiredError(name) from None
            raise ToolFailed(error_text(e)) from None
        if isinstance(outcome, ApprovalRequired):
            if ctx.tool_call_approved:
                # Approved by PydanticAI (a wrapper's own gate) but the core
                # asks now: the model is told; nothing ran.
                raise ToolFailed(approval_required_text(outcome.request))
            if key is None:
                # The core stores requests on this surface only for a named
                # caller, so only a missing call id (or arguments with no
                # JSON) gets here: fail closed.
                raise ToolFailed(error_text(InternalError(FAILED)))
            self._ids[key] = outcome.request.id
            raise DeferForApproval(metadata={APPROVAL_META: approval_meta(outcome.request)})
        try:
            return output_value(outcome.output)
        except APP_FAILURES as e:  # a serializer that raises (its own CancelledError too), NaN/∞, a cycle
            operator_log(capability_id, "the output's JSON form", e)
            raise ToolFailed(error_text(InternalError(OUTPUT_NOT_JSON))) from None

    async def _approved_request(self, capability_id: str, args: Any, key: str | None, metadata: Any) -> str | None:
        """The request an approved call resumes: the one kept for this call,
        or the one its metadata names when none is kept here (another
        process) and it is this caller's for this call. A request of another
        call — metadata copied from another call, or arguments changed since
        (``override_args``: edited arguments need an approval of their own)
        — never runs in this call's place: APPROVAL_NOT_FOUND, nothing runs."""
        call = DeferredCall(
            self._ids.get(key) if key is not None else None, request_id_of(metadata), capability_id, args
        )
        named = None if call.settled else await self.registry.approvals.get_async(call.named or "")
        found = chosen(call, named, self.frame)
        if found is None and not call.settled:
            raise ApprovalNotFoundError(_native.AGENT_TOOL_UNKNOWN_APPROVAL)
        return found

    # -- the approvals -----------------------------------------------------

    def request_id(self, requests: DeferredToolRequests, call_id: str) -> str | None:
        """The core's request id behind a deferred call of this toolset: the
        one kept for this call (caller, call id, tool, arguments), or, when
        none is kept here (another process), the one its metadata names if
        that request is this caller's for this call; else ``None`` (another
        caller's request is never decided or shown in this call's name)."""
        call = deferred_call(requests, call_id, self._capability_by_tool, self.frame, self._ids)
        if call is None:
            return None
        return chosen(call, None if call.settled else self.registry.approvals.get(call.named or ""), self.frame)

    async def _request_id(self, requests: DeferredToolRequests, call_id: str) -> str | None:
        """``request_id``, reading the store without blocking the loop."""
        call = deferred_call(requests, call_id, self._capability_by_tool, self.frame, self._ids)
        if call is None:
            return None
        named = None if call.settled else await self.registry.approvals.get_async(call.named or "")
        return chosen(call, named, self.frame)

    async def answer(
        self,
        requests: DeferredToolRequests,
        approvals: Mapping[str, bool],
        *,
        approver: str | None = None,
        reason: str | None = None,
    ) -> DeferredToolResults:
        """The core decides each call (``True`` approves, ``False`` rejects;
        a refusal — another's request, already decided, the approver rule —
        raises), and the results to run the agent with: an approval with its
        request id as metadata, a rejection as ``ToolDenied`` whose message
        is the core's answer. Merge other toolsets' results with
        ``results.update(...)``."""
        tool_by_call = {c.tool_call_id: c.tool_name for c in requests.approvals}
        results = DeferredToolResults()
        for call_id, approved in approvals.items():
            request_id = await self._request_id(requests, call_id)
            capability_id = self._capability_by_tool.get(tool_by_call.get(call_id, ""))
            if request_id is None or capability_id is None:
                raise ApprovalNotFoundError(_native.AGENT_TOOL_UNKNOWN_APPROVAL)
            if approved:
                await self.registry.approvals.approve_async(request_id, approver=approver, reason=reason)
                results.approvals[call_id] = True
                results.metadata[call_id] = {APPROVAL_META: {"requestId": request_id}}
            else:
                await self.registry.approvals.reject_async(request_id, approver=approver, reason=reason)
                frame = model_frame(self.frame, call_id)
                text = await rejection_text(self.registry, request_id, frame, capability_id)
                results.approvals[call_id] = ToolDenied(text)
        return results

    async def request(self, requests: DeferredToolRequests, call_id: str) -> ApprovalRequest | None:
        """The core's request behind a deferred call (show its input through
        ``registry.redact_approval_input``)."""
        request_id = await self._request_id(requests, call_id)
        return await self.registry.approvals.get_async(request_id) if request_id is not None else None
