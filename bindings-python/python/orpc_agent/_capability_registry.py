"""``CapabilityRegistry``: the invoke/resume API a Python agent host holds,
with ``invoke``'s fast path and the continuation past it.

Separate from its construction (``_registry_build``), which runs once;
``orpc_agent.registry`` re-exports both.
"""

from __future__ import annotations

import collections.abc
import functools
from collections.abc import Callable, Mapping
from typing import Any

from . import _native
from ._app_errors import APP_FAILURES, _handler_failed, _invalid_input
from ._approval_view import approval_view
from ._approvals import Approvals
from ._driver import HANDLER_RAISED, SUSPENDED, VALIDATOR_RAISED, drive
from ._frames import _DIRECT, _as_frame
from ._handler import RUN_HANDLER, continue_handler, start_handler
from ._handler_hold import HandlerHold
from ._run_sync import cancel_requested, run_sync
from .capability import CapabilitySpec
from .errors import InternalError
from .postgres import PostgresAuditSink
from .telemetry import Telemetry
from .types import ApprovalRequest, ApprovalRequired, Frame, InvokeOk

# `registry.invoke` returns a `GovernedCall` (see `CapabilityRegistry.__init__`):
# a coroutine by contract (send, throw, close, `__await__`), so asyncio's
# `run`, `create_task` and `gather` take it as they take an `async def`'s.
collections.abc.Coroutine.register(_native.GovernedCall)


#: ``_invoke_slow``'s marker: the fast path has not been tried yet.
_NOT_STARTED: Any = object()


class CapabilityRegistry:
    """Governed capabilities, built once. Thread-safe for reads; each
    ``invoke`` runs on the calling event loop."""

    def __init__(
        self,
        native: _native.NativeRegistry,
        specs: list[CapabilitySpec],
        runtime_policies: dict[int, Callable[..., Any]],
        telemetry: Telemetry | None = None,
    ) -> None:
        self._native = native
        self._telemetry = telemetry
        self._specs = specs
        self._runtime_policies = runtime_policies
        # Capability ids resolved to registry indices once (DESIGN §4), and
        # what the fast path of `invoke` reads per call (the native registry
        # keeps each tuple as one native object).
        self._index: dict[str, int] = {s.id: i for i, s in enumerate(specs)}
        native.set_fast_paths(
            {
                s.id: (i, s.validate_input, s.handler if s.eager else None, s.validate_output)
                for i, s in enumerate(specs)
            }
        )
        self._invoke_fast = native.invoke_fast
        if telemetry is None and type(self).invoke is CapabilityRegistry.invoke:
            # `invoke` is the native awaitable (`_native.GovernedCall`): as
            # lazy as this class's coroutine, without its cost when the call
            # ends in the fast path; past it, it continues in `_invoke_slow`.
            # Telemetry wraps each call in a span, so it keeps the coroutine;
            # so does a subclass that overrides `invoke`.
            native.set_invoke_host(self, _DIRECT)
            self.__dict__["invoke"] = native.invoke
        self.approvals = Approvals(native)
        #: The PostgreSQL audit sink of ``audit={"postgres": url}``, else ``None``.
        self.audit_sink = PostgresAuditSink(native) if _native.audit_stats(native) is not None else None

    async def invoke(
        self,
        id_or_tool_name: str,
        input: Any = None,
        frame: Frame | Mapping[str, Any] | None = None,
    ) -> InvokeOk[Any] | ApprovalRequired:
        """Runs the governed pipeline. Returns ``InvokeOk`` (``.output``) or
        ``ApprovalRequired`` (``.request``); raises a ``CapabilityError``
        subclass. ``frame`` comes from the authenticated transport (SI-2);
        the default is the ``direct`` surface with an anonymous actor."""
        f = frame if type(frame) is Frame else _as_frame(frame)
        if self._telemetry is not None:
            return await self._telemetry._around(  # type: ignore[no-any-return]
                f, functools.partial(self._invoke_slow, id_or_tool_name, input)
            )
        # Fast path (DESIGN §4): one crossing resolves the id, starts the
        # call, validates the input and steps an `async def` handler once;
        # a handler that finishes without suspending ends the call right
        # here, with the `InvokeOk` made natively. Anything else continues
        # in the general loop, `drive`.
        r = self._invoke_fast(id_or_tool_name, f, input)
        if type(r) is InvokeOk:
            return r
        return await self._invoke_slow(id_or_tool_name, input, f, r)

    async def _invoke_to_handler(self, id_or_tool_name: str, input: Any, frame: Frame, hold: HandlerHold) -> Any:
        """``invoke`` held before its handler until ``hold`` is released (an
        agent adapter's gate, ``_handler_hold``): the general loop, never the
        fast path, which would step the handler."""

        async def run(f: Frame) -> Any:
            return await drive(self, self._native.start_name(id_or_tool_name, f, input), None, input, f, hold=hold)

        return await (run(frame) if self._telemetry is None else self._telemetry._around(frame, run))

    async def _invoke_any_frame(self, id_or_tool_name: str, input: Any, frame: Any) -> InvokeOk[Any] | ApprovalRequired:
        """``invoke`` given a frame that is not a ``Frame`` (a mapping, or
        something to refuse), from the native awaitable."""
        return await self._invoke_slow(id_or_tool_name, input, _as_frame(frame))

    async def _invoke_slow(
        self, id_or_tool_name: str, input: Any, f: Frame, r: Any = _NOT_STARTED
    ) -> InvokeOk[Any] | ApprovalRequired:
        """``invoke`` past its fast path (or all of it, under telemetry)."""
        if r is _NOT_STARTED:
            r = self._invoke_fast(id_or_tool_name, f, input)
            if type(r) is InvokeOk:
                return r
        if r is None:  # a tool name, or no such capability: the core resolves it
            return await drive(self, self._native.start_name(id_or_tool_name, f, input), None, input, f)
        spec = self._specs[self._index[id_or_tool_name]]
        inv, k, value, extra = r
        if k == SUSPENDED:
            coro, first = extra
            return await drive(self, inv, spec, value, f, RUN_HANDLER, None, continue_handler(coro, first))
        if k == VALIDATOR_RAISED:
            if not isinstance(extra, APP_FAILURES):
                raise extra
            return await drive(self, inv, spec, None, f, _invalid_input(inv, extra))
        if k == HANDLER_RAISED:
            if not isinstance(extra, APP_FAILURES):
                raise extra
            return await drive(self, inv, spec, value, f, _handler_failed(inv, extra))
        if k == RUN_HANDLER:  # a sync handler, or one that takes a context
            k, output, pending = start_handler(inv, spec, value, f)
            return await drive(self, inv, spec, value, f, k, output, pending)
        return await drive(self, inv, spec, value, f, k, extra)

    def invoke_sync(
        self,
        id_or_tool_name: str,
        input: Any = None,
        frame: Frame | Mapping[str, Any] | None = None,
    ) -> InvokeOk[Any] | ApprovalRequired:
        """``invoke`` for hosts without an event loop (runs one with ``asyncio.run``)."""
        return run_sync(lambda: self.invoke(id_or_tool_name, input, frame))  # type: ignore[no-any-return]

    async def resume(
        self,
        request_id: str,
        frame: Frame | Mapping[str, Any] | None = None,
        *,
        as_requester: bool = False,
        through_tool: str | None = None,
    ) -> InvokeOk[Any] | ApprovalRequired:
        """Runs an approved request: consumed once, re-checked against its
        hash, run with the surface and actor recorded at creation (SI-3).
        ``frame`` contributes trace, request/agent/session ids and context.
        With ``as_requester=True`` (a caller who may resume only its own
        requests) the frame's actor must have made the request on the
        frame's surface; any other request is ``APPROVAL_NOT_FOUND`` and is
        not consumed. ``through_tool`` (a capability id or tool name: the
        resume comes through that capability's tool, as over MCP, where the
        client names the request id) implies ``as_requester`` and also
        requires the request to be for that capability; a frame whose actor
        has no id may then resume only a request made by an identical actor
        without one in the same session. The core decides; anything else (an unknown tool
        included) is ``APPROVAL_NOT_FOUND`` and consumes nothing."""
        f = _as_frame(frame)
        if self._telemetry is not None:
            return await self._telemetry._around(  # type: ignore[no-any-return]
                f, functools.partial(self._resume, request_id, as_requester, through_tool)
            )
        return await self._resume(request_id, as_requester, through_tool, f)

    async def _resume(
        self, request_id: str, as_requester: bool, through_tool: str | None, f: Frame
    ) -> InvokeOk[Any] | ApprovalRequired:
        inv = self._native.resume(request_id, f, as_requester, through_tool, cancel_requested())
        return await drive(self, inv, None, None, f)

    def resume_sync(
        self,
        request_id: str,
        frame: Frame | Mapping[str, Any] | None = None,
        *,
        as_requester: bool = False,
        through_tool: str | None = None,
    ) -> InvokeOk[Any] | ApprovalRequired:
        """``resume`` for hosts without an event loop."""
        return run_sync(  # type: ignore[no-any-return]
            lambda: self.resume(request_id, frame, as_requester=as_requester, through_tool=through_tool)
        )

    async def redact_approval_input(self, request: ApprovalRequest, context: Any = None) -> Any:
        """The model-safe view of a request's input for approval UIs, made by
        the capability's ``redact_approval_input`` with the request's recorded
        surface and actor. The hash still binds the full input."""
        # A request whose capability this registry does not serve raises the
        # core's NOT_FOUND (SI-8), as in Node and Swift.
        view, index, info, timeout_ms = self._native.approval_input_view(request.to_dict())
        if view == _native.APPROVAL_VIEW_AS_STORED:
            return request.input
        if view != _native.APPROVAL_VIEW_REDACT or info is None:
            raise InternalError(_native.INTERNAL_MESSAGE)
        return await approval_view(self._specs[index], request, info, context, timeout_ms)

    def inspect(self) -> dict[str, Any]:
        """The core's report: resolved values, surfaces, tool names, warnings."""
        return self._native.inspect()

    def descriptors(self, surface: str = "direct") -> list[dict[str, Any]]:
        """Portable descriptors of the capabilities exposed on ``surface``."""
        return self._native.descriptors(surface)

    def descriptors_cbor(self, surface: str = "direct") -> bytes:
        """The same descriptors as one CBOR array, each item the JSON fields
        plus a ``metadata`` map of their ``std:`` tool-definition keys (the
        core's encoding, as Node's gateway sends it)."""
        return self._native.descriptors_cbor(surface)

    def spec(self, capability_id: str) -> CapabilitySpec:
        return self._specs[self._index[capability_id]]
