"""``create_capability_registry`` and ``CapabilityRegistry``: the API a
Python agent host holds."""

from __future__ import annotations

import asyncio
import collections.abc
import copy
import functools
import inspect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from . import _native
from ._driver import (
    HANDLER_RAISED,
    RUN_HANDLER,
    SUSPENDED,
    VALIDATOR_RAISED,
    _handler_failed,
    _invalid_input,
    continue_handler,
    drive,
    run_sync,
    start_handler,
)
from .capability import CapabilitySpec, HostPolicy, camel_keys, host_policy, spec_of
from .errors import ExecutionFailedError, InternalError, RegistryValidationError
from .postgres import ApprovalPage, PostgresAuditSink, connection, wait
from .schema import restore
from .telemetry import Telemetry
from .types import ApprovalRequest, ApprovalRequired, Frame, InvokeOk, RedactionInfo

__all__ = ["create_capability_registry", "CapabilityRegistry", "Approvals"]

_DIRECT = _native.Frame("direct")

# `registry.invoke` returns a `GovernedCall` (see `CapabilityRegistry.__init__`):
# a coroutine by contract (send, throw, close, `__await__`), so asyncio's
# `run`, `create_task` and `gather` take it as they take an `async def`'s.
collections.abc.Coroutine.register(_native.GovernedCall)


def _as_frame(frame: Frame | Mapping[str, Any] | None) -> Frame:
    if frame is None:
        return _DIRECT
    if isinstance(frame, Frame):
        return frame
    f = dict(frame)
    trace = f.pop("trace", None) or {}
    kwargs = {
        "actor": f.pop("actor", None),
        "traceparent": f.pop("traceparent", None) or trace.get("traceparent"),
        "tracestate": f.pop("tracestate", None) or trace.get("tracestate"),
        "request_id": f.pop("request_id", None) or f.pop("requestId", None),
        "agent_id": f.pop("agent_id", None) or f.pop("agentId", None),
        "session_id": f.pop("session_id", None) or f.pop("sessionId", None),
        "context": f.pop("context", None),
    }
    surface = f.pop("surface", None)  # required: the core names the five
    if f:
        raise ValueError(f"unknown frame field(s): {', '.join(sorted(f))}")
    return Frame(surface, **kwargs)


def _filter(
    capability_id: str | None,
    actor_id: str | None,
    status: str | None,
    limit: int | None,
    cursor: str | None,
    surface: str | None = None,
) -> dict[str, Any]:
    """The filter as the core reads it (which refuses an unknown status or surface)."""
    filt = {
        "capabilityId": capability_id,
        "actorId": actor_id,
        "surface": surface,
        "status": status,
        "limit": limit,
        "cursor": cursor,
    }
    return {k: v for k, v in filt.items() if v is not None}


def _page(raw: tuple[list[dict[str, Any]], str | None]) -> ApprovalPage:
    return ApprovalPage([ApprovalRequest.from_dict(r) for r in raw[0]], raw[1])


class Approvals:
    """Approval requests for approval UIs: ``get``, ``list``, ``page``,
    ``approve``, ``reject``, and their ``*_async`` forms. The synchronous
    forms work on every store (a PostgreSQL call blocks with the GIL
    released); in async code use the ``*_async`` forms, which never block
    the event loop."""

    def __init__(self, native: _native.NativeRegistry) -> None:
        self._native = native

    def get(self, request_id: str) -> ApprovalRequest | None:
        found = _native.approval_get_blocking(self._native, request_id)
        return ApprovalRequest.from_dict(found) if found is not None else None

    def page(
        self,
        *,
        capability_id: str | None = None,
        actor_id: str | None = None,
        surface: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> ApprovalPage:
        """One page, oldest first, and the cursor of the next (``None`` on the last)."""
        return _page(
            _native.approval_page(self._native, _filter(capability_id, actor_id, status, limit, cursor, surface))
        )

    async def page_async(
        self,
        *,
        capability_id: str | None = None,
        actor_id: str | None = None,
        surface: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> ApprovalPage:
        raw = await wait(
            _native.approval_page_async(self._native, _filter(capability_id, actor_id, status, limit, cursor, surface))
        )
        return _page(raw)

    async def get_async(self, request_id: str) -> ApprovalRequest | None:
        found = await wait(_native.approval_get_async(self._native, request_id))
        return ApprovalRequest.from_dict(found) if found is not None else None

    async def list_async(self, **filters: Any) -> list[ApprovalRequest]:
        return (await self.page_async(**filters)).requests

    async def approve_async(
        self, request_id: str, *, approver: str | None = None, reason: str | None = None
    ) -> ApprovalRequest:
        return ApprovalRequest.from_dict(
            await wait(_native.decide_async(self._native, request_id, True, approver, reason))
        )

    async def reject_async(
        self, request_id: str, *, approver: str | None = None, reason: str | None = None
    ) -> ApprovalRequest:
        return ApprovalRequest.from_dict(
            await wait(_native.decide_async(self._native, request_id, False, approver, reason))
        )

    def list(
        self,
        *,
        capability_id: str | None = None,
        actor_id: str | None = None,
        surface: str | None = None,
        status: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> list[ApprovalRequest]:
        """A page of requests, oldest first; pass the last id as ``cursor`` for the next.
        ``surface`` keeps the requests made on that surface (with ``actor_id``:
        exactly that requester's own)."""
        return self.page(
            capability_id=capability_id, actor_id=actor_id, surface=surface, status=status, limit=limit, cursor=cursor
        ).requests

    def approve(self, request_id: str, *, approver: str | None = None, reason: str | None = None) -> ApprovalRequest:
        return ApprovalRequest.from_dict(_native.decide_blocking(self._native, request_id, True, approver, reason))

    def reject(self, request_id: str, *, approver: str | None = None, reason: str | None = None) -> ApprovalRequest:
        return ApprovalRequest.from_dict(_native.decide_blocking(self._native, request_id, False, approver, reason))


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
            if not isinstance(extra, Exception):
                raise extra
            return await drive(self, inv, spec, None, f, _invalid_input(inv, extra))
        if k == HANDLER_RAISED:
            if isinstance(extra, asyncio.CancelledError):
                k = inv.answer(_native.ANSWER_CANCELLED)
            elif isinstance(extra, Exception):
                k = _handler_failed(inv, extra)
            else:
                raise extra
            return await drive(self, inv, spec, value, f, k)
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
        without one. The core decides; anything else (an unknown tool
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
        inv = self._native.resume(request_id, f, as_requester, through_tool)
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
        kind, index, info = self._native.approval_input_view(request.to_dict())
        if kind == 1:
            return request.input
        if index is None or info is None:
            raise InternalError(_native.INTERNAL_MESSAGE)
        spec = self._specs[index]
        redactor = spec.redact_approval_input
        if redactor is None:  # unreachable: the core refuses the build (a declared hook with no implementation)
            raise InternalError("no approval-input redactor")
        try:
            # The stored input as the capability's type (a pydantic model
            # for a model schema), restored without validating it again:
            # the value the hash binds, unchanged.
            value = restore(spec.input, copy.deepcopy(request.input))
            if spec.redact_approval_input_takes_info:
                view = redactor(value, RedactionInfo(info["surface"], info["capabilityId"], info["actor"], context))
            else:
                view = redactor(value)
            if inspect.isawaitable(view):
                view = await view
        except Exception as exc:
            raise ExecutionFailedError(_native.APPROVAL_VIEW_FAILED_MESSAGE) from exc
        return view

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


def _signature_problems(specs: Sequence[CapabilitySpec]) -> list[dict[str, Any]]:
    """A redactor is called as ``fn(value)`` or ``fn(value, info)``; one that
    takes neither would fail every call. Reported at build with the core's
    problems (a declared hook without an implementation is the core's
    MISSING_HOOK: the declarations say which hooks are held)."""
    problems: list[dict[str, Any]] = []
    for s in specs:
        for path, takes_info in (
            ("redact.output", s.redact_output_takes_info),
            ("redact.approvalInput", s.redact_approval_input_takes_info),
        ):
            if takes_info is None:
                problems.append(
                    {
                        "capability": s.id,
                        "path": path,
                        "code": "HOOK_SIGNATURE",
                        "message": "must take (value) or (value, info)",
                    }
                )
    return problems


def _bind_named(wire: list[Any], impls: dict[int, Callable[..., Any]], named: Mapping[str, Callable[..., Any]]) -> None:
    """Host-policy markers written as JSON find their implementation by name."""
    for i, p in enumerate(wire):
        if isinstance(p, dict) and p.get("host") is True and i not in impls:
            fn = named.get(p.get("name", ""))
            if fn is not None:
                impls[i] = fn


def create_capability_registry(
    capabilities: Iterable[Any],
    *,
    policies: Sequence[Any] | None = None,
    defaults: Mapping[str, Any] | None = None,
    approver_must_differ: bool | None = None,
    approval_store: str | Mapping[str, Any] = "memory",
    audit: Callable[[dict[str, Any]], Any] | Mapping[str, Any] | None = None,
    audit_payloads: bool = False,
    host_policies: Mapping[str, Callable[..., Any]] | None = None,
    clock: Callable[[], int] | None = None,
    options: Mapping[str, Any] | None = None,
    telemetry: Telemetry | None = None,
) -> CapabilityRegistry:
    """Builds the registry, validating every declaration at once.

    Raises ``RegistryValidationError`` whose ``problems`` lists every problem.
    ``policies`` are runtime-level policies (run before capability ones):
    declarative dicts or host callables. ``approval_store`` is ``"memory"``,
    ``{"sqlite": path}`` or ``{"postgres": url}`` (or ``{"postgres": {"url":
    url, **options}}``, see ``orpc_agent.postgres``). ``audit`` receives each
    audit record (a dict); ``{"postgres": url, "subscriber": fn?}`` also
    writes every record to PostgreSQL (``registry.audit_sink``);
    ``audit_payloads`` adds the redacted output to finished records.
    ``telemetry`` (``orpc_agent.telemetry.Telemetry``) reports one
    OpenTelemetry span per call, a call counter and a duration histogram.
    ``clock`` (unix ms) replaces the system clock (tests). ``options`` is
    raw registry options JSON (camelCase, as in declaration files), taken
    verbatim; the keyword arguments are merged over it.
    """
    specs = [spec_of(c) for c in capabilities]
    named = dict(host_policies or {})
    raw = dict(options or {})
    runtime_wire: list[Any] = list(raw.pop("policies", None) or [])
    runtime_impl: dict[int, Callable[..., Any]] = {}
    for i, p in enumerate(policies or (), start=len(runtime_wire)):
        if isinstance(p, HostPolicy) or callable(p):
            hp = p if isinstance(p, HostPolicy) else host_policy(p)
            runtime_wire.append(hp.marker())
            runtime_impl[i] = hp.fn
        else:
            runtime_wire.append(camel_keys(p) if not isinstance(p, dict) or "host" not in p else dict(p))
    _bind_named(runtime_wire, runtime_impl, named)
    for s in specs:
        if isinstance(s.meta, dict) and isinstance(s.meta.get("policies"), list):
            _bind_named(s.meta["policies"], s.policies, {**named, **s.host_policies})

    wire_options: dict[str, Any] = raw
    if runtime_wire:
        wire_options["policies"] = runtime_wire
    # The runtime policy functions held here (MISSING_HOOK otherwise).
    wire_options["hostPolicies"] = sorted(runtime_impl)
    if defaults is not None:
        wire_options["defaults"] = camel_keys(defaults)
    if approver_must_differ is not None:
        wire_options["approverMustDiffer"] = approver_must_differ
    store: Any = approval_store if isinstance(approval_store, str) else dict(approval_store)
    postgres_options = None
    if isinstance(store, dict) and "postgres" in store and len(store) == 1:
        url, postgres_options = connection(store["postgres"])
        store = {"postgres": url}
    audit_postgres = None
    if isinstance(audit, Mapping):
        audit_postgres = connection(audit.get("postgres"))
        if not audit_postgres[0]:
            raise ValueError('audit must be a callable or {"postgres": url, "subscriber": callable?}')
        audit = audit.get("subscriber")
    signature_problems = _signature_problems(specs)
    try:
        native = _native.NativeRegistry(
            json.dumps([s.declaration() for s in specs]),
            json.dumps(wire_options),
            json.dumps(store),
            audit=audit,
            audit_payloads=audit_payloads,
            clock=clock,
            postgres_options=postgres_options,
            audit_postgres=audit_postgres,
            telemetry=None if telemetry is None else telemetry._finished,
            span_payloads=telemetry is not None and telemetry.payloads,
        )
    except RegistryValidationError as e:
        if not signature_problems:
            raise
        # One aggregate error with every problem (SI-4).
        problems = [*e.problems, *signature_problems]
        raise RegistryValidationError(f"{len(problems)} problem(s) in the declarations", problems) from None
    if signature_problems:
        del native  # dropped: its store and sink close with it
        raise RegistryValidationError(
            f"{len(signature_problems)} problem(s) with the declared hooks", signature_problems
        )
    return CapabilityRegistry(native, specs, runtime_impl, telemetry)
