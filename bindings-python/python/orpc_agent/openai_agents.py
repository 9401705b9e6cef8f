"""OpenAI Agents SDK adapter (PyPI ``openai-agents``): governed capabilities
as the SDK's ``FunctionTool``s, approvals as the SDK's run interruptions.

``governed_tools(registry, frame)`` lists every capability the core exposes
on surface ``aiSdk`` (contextual ones left out) as a ``FunctionTool``: the
tool name is the descriptor's ``toolNames.aiSdk``, the parameters are the
descriptor's input JSON Schema — strict when the SDK can make it strict
without changing what it accepts (the SDK's own rule for MCP tools), else
not strict. The SDK validates nothing more: the core validates at stage 4.

The approval decision is the core's, asked through one invocation (as in
Node's AI SDK adapter). The SDK asks a tool's ``needs_approval`` before it
runs it; the adapter answers by running the governed call:

- ``approval_required`` → ``True``: the core stored a request, its id is
  kept under the caller and the tool call id, and the run ends with an
  interruption (``result.interruptions``);
- anything else → ``False``: the settled outcome (the output, or the
  core's error text) is what the tool returns when the SDK calls it — the
  pipeline ran once.

Answer an interruption with ``await tools.approve(state, item,
approver=...)`` (the core's approve, then ``state.approve``) or ``await
tools.reject(state, item, approver=...)`` (the core's reject, then
``state.reject`` with the core's text for the model), then run the state
again; ``RunState.to_string()``/``from_string`` in between are fine. The
approved call resumes the core's request once (``through_tool``: only this
tool's request, made on ``aiSdk`` by this caller); a replay of the run is
refused by the core (``APPROVAL_CONSUMED``). A plain ``state.approve(item)``
works too: the adapter records it as the core's decision (approver: the
``approver`` option, else the frame's actor id) unless
``decide_approvals=False``. A plain ``state.reject(item)`` never reaches a
tool: the core's request stays pending until it expires.

What the model reads of a call without an output is the core's text
(``CODE: message`` and the code's hint); an exception that is not a
``CapabilityError`` is ``INTERNAL`` with a fixed text, the exception on the
``orpc_agent`` logger.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import MutableMapping
from typing import Any

from agents import FunctionTool, RunContextWrapper, RunState, ToolApprovalItem
from agents.strict_schema import ensure_strict_json_schema
from agents.tool_context import ToolContext

from . import _native
from ._agent_tools import (
    FAILED,
    OUTPUT_NOT_JSON,
    PrincipalRequiredError,
    approval_key,
    approval_required_text,
    caller_required,
    error_text,
    model_frame,
    operator_log,
    output_text,
    output_value,
    record_approval,
    rejection_text,
    shared_approval_ids,
)
from .errors import ApprovalNotFoundError, CapabilityError, InternalError
from .registry import CapabilityRegistry
from .types import ApprovalRequest, ApprovalRequired, Frame

__all__ = ["governed_tools", "GovernedTools", "PrincipalRequiredError"]


def _params_schema(descriptor: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The descriptor's input schema, and whether it is strict: converted by
    the SDK's ``ensure_strict_json_schema`` refusing open objects, as the
    SDK converts MCP tools' schemas; if that fails, the schema as it is."""
    schema = copy.deepcopy(descriptor["inputSchema"])
    empty = schema == {}
    if "properties" not in schema:
        schema["properties"] = {}
    try:
        return ensure_strict_json_schema(copy.deepcopy(schema), _reject_open_objects=not empty), True
    except Exception:
        return schema, False


def _call_id_of(item: ToolApprovalItem) -> str | None:
    raw = item.raw_item
    value = raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)
    return value if isinstance(value, str) else None


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
        # Outcomes computed by `needs_approval`, waiting for the tool's call.
        self._settled: dict[tuple[str | None, str], tuple[bool, Any]] = {}
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
        key = approval_key(self.frame, call_id)
        kept = self._ids.get(key) if key is not None else None
        if kept is not None:
            # Asked again about a call already presented (a resumed run with
            # the call still undecided): the same request, not a second one.
            request = await self.registry.approvals.get_async(kept)
            if request is not None and _native.agent_tool_kept_request_holds_the_call(request.status):
                return True
        frame = model_frame(self.frame, call_id)
        try:
            outcome = await self.registry.invoke(capability_id, params, frame)
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
                # caller, so only a missing call id gets here: fail closed.
                raise InternalError(FAILED)
            self._ids[key] = outcome.request.id
            return True
        self._settled[self._settled_key(call_id)] = (True, outcome.output)
        return False

    async def _run(self, capability_id: str, call_id: str, arguments: str) -> str:
        settled = self._settled.pop(self._settled_key(call_id), None)
        if settled is not None:
            ok, value = settled
            return self._text(capability_id, value) if ok else error_text(value)
        frame = model_frame(self.frame, call_id)
        key = approval_key(self.frame, call_id)
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
                outcome = await self.registry.invoke(capability_id, _arguments(arguments), frame)
        except CapabilityError as e:
            return error_text(e)
        if isinstance(outcome, ApprovalRequired):
            return approval_required_text(outcome.request)
        return self._text(capability_id, outcome.output)

    @staticmethod
    def _text(capability_id: str, output: Any) -> str:
        try:
            return output_text(output_value(output))
        except Exception as e:  # a serializer that raises, NaN/∞, a cycle
            operator_log(capability_id, "the output's JSON form", e)
            return error_text(InternalError(OUTPUT_NOT_JSON))

    # -- the interruptions -------------------------------------------------

    def request_id(self, item: ToolApprovalItem) -> str | None:
        """The core's request id behind an interruption of these tools, if
        this tool set keeps one for its caller."""
        if item.tool_name not in self._capability_by_tool:
            return None
        key = approval_key(self.frame, _call_id_of(item))
        return self._ids.get(key) if key is not None else None

    async def request(self, item: ToolApprovalItem) -> ApprovalRequest | None:
        """The core's request behind an interruption (show its input through
        ``registry.redact_approval_input``)."""
        request_id = self.request_id(item)
        return await self.registry.approvals.get_async(request_id) if request_id is not None else None

    def _required_id(self, item: ToolApprovalItem) -> tuple[str, str]:
        request_id = self.request_id(item)
        if request_id is None:
            raise ApprovalNotFoundError(_native.AGENT_TOOL_UNKNOWN_INTERRUPTION)
        return request_id, self._capability_by_tool[str(item.tool_name)]

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
        request_id, _ = self._required_id(item)
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
        request_id, capability_id = self._required_id(item)
        decided = await self.registry.approvals.reject_async(request_id, approver=approver, reason=reason)
        text = await rejection_text(
            self.registry, request_id, model_frame(self.frame, _call_id_of(item)), capability_id
        )
        state.reject(item, rejection_message=text)
        return decided


def _arguments(arguments: str) -> Any:
    """The model's arguments as JSON; text that is not JSON is handed to
    the core as it is (its validator refuses it: INVALID_INPUT)."""
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def governed_tools(
    registry: CapabilityRegistry,
    frame: Frame | None = None,
    *,
    approver: str | None = None,
    decide_approvals: bool = True,
    approval_ids: MutableMapping[str, str] | None = None,
) -> GovernedTools:
    """The registry's capabilities exposed on ``aiSdk``, as ``FunctionTool``s
    for one caller. ``frame`` names the caller (actor, session, context;
    its surface is replaced by ``aiSdk``); a call that needs approval needs
    an actor id or a session id in it (``PrincipalRequiredError``
    otherwise). ``approval_ids``: where request ids wait between the
    interruption and the approved run (default: in process, per registry);
    pass a shared mapping when another process resumes the run."""
    return GovernedTools(
        registry, frame, approver=approver, decide_approvals=decide_approvals, approval_ids=approval_ids
    )
