"""``create_capability_registry``: builds a ``CapabilityRegistry`` from the
declarations, binds host policies to their markers (``_bind_named``) and
reports the hooks' signature problems with the core's, in one error.

Separate from the registry's invoke/resume API (``_capability_registry``):
it runs once, at build, never on a call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from . import _native
from ._capability_registry import CapabilityRegistry
from ._sync_hooks import refuse_async
from .capability import CapabilitySpec, HostPolicy, camel_keys, host_policy, spec_of
from .errors import RegistryValidationError
from .postgres import connection
from .telemetry import Telemetry


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
    if audit is not None:
        # Called as each call's record is written: a coroutine would never
        # run, and every record would be lost without a word.
        refuse_async(audit, "audit subscriber", instead="; hand each record to a queue or a task of your own")
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
