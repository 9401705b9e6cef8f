"""``GovernedTools``: the governed ``FunctionTool``s of one caller — the
approval gate (``needs_approval``) that runs the governed call, the tool
call that returns its settled outcome or resumes the approved request —
and the answers to their interruptions (``approve``, ``reject``).

Separate from ``governed_tools`` (``orpc_agent.openai_agents``), which
re-exports it, and from the conversions of the SDK's values
(``_openai_conversions``).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import MutableMapping
from typing import Any

from agents import FunctionTool, RunContextWrapper, RunState, ToolApprovalItem
from agents.tool_context import ToolContext

from . import _native
from ._agent_gate import asked_again
from ._agent_tools import (
    FAILED,
    approval_key,
    approval_required_text,
    caller_required,
    error_text,
    model_frame,
    operator_log,
    record_approval,
    rejection_text,
    shared_approval_ids,
)
from ._agent_tools import PrincipalRequiredError as PrincipalRequiredError
from ._handler_hold import HandlerHold, invoke_to_handler
from ._openai_conversions import _arguments, _call_id_of, _params_schema, _parsed_arguments, _text
from .errors import ApprovalNotFoundError, CapabilityError, InternalError
from .registry import CapabilityRegistry
from .types import ApprovalRequest, ApprovalRequired, Frame


class GovernedTools(list[FunctionTool]):
    """The governed ``FunctionTool``s of one caller (a list: pass it as
    ``Agent(tools=...)``), and the answers to their interruptions."""

    def __init__(
        self,
        registry: CapabilityRegistry,
        frame: Frame | None = None,
        *,
        approver: str | None = None,
        decide_approvals: bool = True,
        approval_ids: MutableMapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.registry = registry
        self.frame = frame
        self._approver = approver
        self._decide = decide_approvals
        self._ids = approval_ids if approval_ids is not None else shared_approval_ids(registry)
        # Outcomes computed by `needs_approval`, and calls it let through
        # (held before their handler: `_handler_hold`), waiting for the tool's call.
        self._settled: dict[tuple[str | None, str], tuple[bool, Any]] = {}
        self._held: dict[tuple[str | None, str], tuple[HandlerHold, asyncio.Task[Any]]] = {}
        self._capability_by_tool: dict[str, str] = {}
        for descriptor in registry.descriptors("aiSdk"):
            if descriptor.get("discovery") == "contextual":
                continue
            self.append(self._tool(descriptor))

    # -- the tools ---------------------------------------------------------

    def _tool(self, descriptor: dict[str, Any]) -> FunctionTool:
        name: str = descriptor["toolNames"]["aiSdk"]
        capability_id: str = descriptor["id"]
        self._capability_by_tool[name] = capability_id
        schema, strict = _params_schema(descriptor)

        async def needs_approval(ctx: RunContextWrapper[Any], params: dict[str, Any], call_id: str) -> bool:
            return await self._gate(name, capability_id, params, call_id)

        async def on_invoke(ctx: ToolContext[Any], arguments: str) -> str:
            # Nothing but text leaves: the SDK would end the run on an
            # exception, or show its text.
            try:
                return await self._run(capability_id, ctx.tool_call_id, arguments)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                operator_log(capability_id, "the tool call", e)
                return error_text(InternalError(FAILED))

        return FunctionTool(
            name=name,
            description=descriptor["description"],
            params_json_schema=schema,
            on_invoke_tool=on_invoke,
            strict_json_schema=strict,
            needs_approval=needs_approval,
        )

    def _settled_key(self, call_id: str) -> tuple[str | None, str]:
        frame = self.frame
        who = json.dumps([frame.actor, frame.session_id], sort_keys=True, default=str) if frame else None
        return (who, call_id)

    async def _gate(self, name: str, capability_id: str, params: dict[str, Any], call_id: str) -> bool:
        """``True`` iff the core asks for approval of this call."""
        # What an earlier call under this id left (its run ended before the
        # tool was called) is not this call's: one held there ends unrun.
        self._settled.pop(self._settled_key(call_id), None)
        if (left := self._held.pop(self._settled_key(call_id), None)) is not None:
            left[0].release(False)
        key = approval_key(self.frame, call_id, capability_id, params)
        kept = self._ids.get(key) if key is not None else None
        frame = model_frame(self.frame, call_id)
        try:
            # Asked again about a call already presented (a resumed or
            # replayed run): the core's answer for its kept request. Else
            # the gate only: a call that passes it waits for the tool's call.
            ask = functools.partial(asked_again, self.registry, kept, capability_id, params, frame)
            hold, task = await invoke_to_handler(lambda h: ask(held=h))
            if hold is not None:
                self._held[self._settled_key(call_id)] = (hold, task)
                return False
            outcome = task.result()
            if isinstance(outcome, ApprovalRequest):
                return True  # undecided: held on its one request
        except CapabilityError as e:
            if caller_required(e):
                raise PrincipalRequiredError(name) from None
            self._settled[self._settled_key(call_id)] = (False, e)
            return False
        except Exception as e:
            operator_log(capability_id, "the tool call", e)
            self._settled[self._settled_key(call_id)] = (False, InternalError(FAILED))
            return False
        if isinstance(outcome, ApprovalRequired):
            if key is None:
                # The core stores requests on this surface only for a named
                # caller, so only a missing call id (or arguments with no
                # JSON) gets here: fail closed.
                raise InternalError(FAILED)
            self._ids[key] = outcome.request.id
            return True
        self._settled[self._settled_key(call_id)] = (True, outcome.output)
        return False

    async def _run(self, capability_id: str, call_id: str, arguments: str) -> str:
        settled = self._settled.pop(self._settled_key(call_id), None)
        if (held := self._held.pop(self._settled_key(call_id), None)) is not None:
            held[0].release(True)  # the SDK invokes the tool: its handler runs now
            try:
                settled = (True, (await held[1]).output)
            except CapabilityError as e:
                settled = (False, e)
        if settled is not None:
            ok, value = settled
            return _text(capability_id, value) if ok else error_text(value)
        frame = model_frame(self.frame, call_id)
        params = _arguments(arguments)
        key = approval_key(self.frame, call_id, capability_id, params)
        request_id = self._ids.get(key) if key is not None else None
        try:
            if request_id is not None:
                # The approved call: the core's request, resumed once.
                if self._decide:
                    await record_approval(self.registry, request_id, self._approver, frame)
                outcome = await self.registry.resume(request_id, frame, through_tool=capability_id)
            else:
                # Called without the gate first (the SDK gated arguments it
                # could not parse itself, or the key was evicted): run here.
                outcome = await self.registry.invoke(capability_id, params, frame)
        except CapabilityError as e:
            return error_text(e)
        if isinstance(outcome, ApprovalRequired):
            return approval_required_text(outcome.request)
        return _text(capability_id, outcome.output)

    # -- the interruptions -------------------------------------------------

    def request_id(self, item: ToolApprovalItem) -> str | None:
        """The core's request id behind an interruption of these tools, if
        this tool set keeps one for its caller."""
        capability_id = self._capability_by_tool.get(str(item.tool_name))
        params = _parsed_arguments(item)
        if capability_id is None or params is None:
            return None
        key = approval_key(self.frame, _call_id_of(item), capability_id, params.value)
        return self._ids.get(key) if key is not None else None

    async def request(self, item: ToolApprovalItem) -> ApprovalRequest | None:
        """The core's request behind an interruption (show its input through
        ``registry.redact_approval_input``); ``None`` when none, or when the
        id kept under its call is another tool's request (a provider reusing
        call ids)."""
        request_id = self.request_id(item)
        request = await self.registry.approvals.get_async(request_id) if request_id is not None else None
        if request is None or request.capability_id != self._capability_by_tool.get(str(item.tool_name)):
            return None
        return request

    async def _required_id(self, item: ToolApprovalItem) -> tuple[str, str]:
        request = await self.request(item)
        if request is None:
            raise ApprovalNotFoundError(_native.AGENT_TOOL_UNKNOWN_INTERRUPTION)
        return request.id, request.capability_id

    async def approve(
        self,
        state: RunState[Any, Any],
        item: ToolApprovalItem,
        *,
        approver: str | None = None,
        reason: str | None = None,
    ) -> ApprovalRequest:
        """The core approves the request (``approver_must_differ`` and the
        rest are the core's; a refusal raises and the state is unchanged),
        then the run state approves the call. Run the state again to run it."""
        request_id, _ = await self._required_id(item)
        decided = await self.registry.approvals.approve_async(request_id, approver=approver, reason=reason)
        state.approve(item)
        return decided

    async def reject(
        self,
        state: RunState[Any, Any],
        item: ToolApprovalItem,
        *,
        approver: str | None = None,
        reason: str | None = None,
    ) -> ApprovalRequest:
        """The core rejects the request, then the run state rejects the call
        with the core's answer as what the model reads."""
        request_id, capability_id = await self._required_id(item)
        decided = await self.registry.approvals.reject_async(request_id, approver=approver, reason=reason)
        text = await rejection_text(
            self.registry, request_id, model_frame(self.frame, _call_id_of(item)), capability_id
        )
        state.reject(item, rejection_message=text)
        return decided
