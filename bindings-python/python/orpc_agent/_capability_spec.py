"""``CapabilitySpec``: one recorded declaration — the metadata JSON the
core validates, the schemas, and the host functions the driver calls when a
step asks (its validators and flags are looked up once, at construction,
not per call) — with ``hook_takes_info``, which reads how its redactors are
called, and ``HostPolicy``/``host_policy``, the host policies a declaration
carries.

Separate from the recording itself (``capability``: ``@capability`` and
``define_capability`` map keyword arguments and annotations onto these,
once, at declaration); ``orpc_agent.capability`` re-exports these names.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .schema import Schema, validated_json_schema


@dataclass(frozen=True)
class HostPolicy:
    """A policy implemented in Python: ``fn(PolicyRequest) -> Decision``
    (sync or async), where ``Abstain()`` is "no opinion". A policy that
    raises, runs past the capability's timeout or answers anything but a
    decision — ``None`` included, a policy that forgot to return — failed
    and denies (fail closed, decided by the core)."""

    fn: Callable[..., Any]
    name: str | None = None
    mode: str | None = None

    def marker(self) -> dict[str, Any]:
        out: dict[str, Any] = {"host": True}
        if self.name is not None:
            out["name"] = self.name
        if self.mode is not None:
            out["mode"] = self.mode
        return out


def host_policy(fn: Callable[..., Any], *, name: str | None = None, mode: str | None = None) -> HostPolicy:
    """Name a host policy (names appear in audit records and deny messages).
    Unnamed, a function is named by its own name; a lambda names none (as an
    anonymous function in Node: no ``"<lambda>"`` in what a model reads)."""
    own = getattr(fn, "__name__", None)
    return HostPolicy(fn, name or (own if own != "<lambda>" else None), mode)


@dataclass
class CapabilitySpec:
    """One declaration: the id, the metadata JSON the core validates, the
    schemas, and the host functions the driver calls when a step asks."""

    id: str
    handler: Callable[..., Any]
    meta: dict[str, Any]
    input: Schema | None
    output: Schema | None
    redact_output: Callable[..., Any] | None = None
    redact_approval_input: Callable[..., Any] | None = None
    retry_on: Callable[..., Any] | None = None
    # Host policies by their position in `meta["policies"]`.
    policies: dict[int, Callable[..., Any]] = field(default_factory=dict)
    # Host policy implementations by name, for markers written in raw `meta`.
    host_policies: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    is_async: bool = True
    wants_context: bool = False
    # An `async def` with `yield` (a streaming handler): each value it
    # yields is a progress report, and the last one is its output.
    is_stream: bool = False

    def __post_init__(self) -> None:
        # Looked up once, not per call.
        self.validate_input: Callable[[Any], Any] | None = self.input.validate if self.input is not None else None
        self.validate_output: Callable[[Any], Any] | None = self.output.validate if self.output is not None else None
        self.eager = self.is_async and not self.wants_context and not self.is_stream
        # Redactors take `(value)` or `(value, info)`: read from their
        # signatures once, here (`None`: neither form binds, a build problem).
        self.redact_output_takes_info = hook_takes_info(self.redact_output)
        self.redact_approval_input_takes_info = hook_takes_info(self.redact_approval_input)

    def declaration(self) -> dict[str, Any]:
        """The JSON declaration the core builds from."""
        decl: dict[str, Any] = {"id": self.id, "meta": self.meta}
        if self.input is not None:
            decl["inputSchema"] = self.input.json_schema()
            decl["validateInput"] = True
            # What policies read is the validated value as `dump` writes it,
            # which pydantic aliases (or a custom schema) can make differ
            # from what callers send: the core type-checks Cedar against it.
            validated = validated_json_schema(self.input)
            if validated != decl["inputSchema"]:
                decl["validatedInputSchema"] = validated
        if self.output is not None:
            decl["outputSchema"] = self.output.json_schema()
            decl["validateOutput"] = True
        # The hooks held here: a hook the metadata declares without one is
        # the core's MISSING_HOOK problem, reported with all the others.
        decl["hostHooks"] = {
            "redactOutput": self.redact_output is not None,
            "redactApprovalInput": self.redact_approval_input is not None,
            "retryOn": self.retry_on is not None,
            "policies": sorted(self.policies),
        }
        return decl


def hook_takes_info(fn: Callable[..., Any] | None) -> bool | None:
    """How a redactor is called: ``True`` as ``fn(value, info)``, ``False``
    as ``fn(value)``, ``None`` when it takes neither. Two positional
    arguments win when both bind (``def r(value, info=None)``); a callable
    whose signature cannot be read (some builtins) is called with two."""
    if fn is None:
        return True
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    for args, takes_info in (((None, None), True), ((None,), False)):
        try:
            sig.bind(*args)
        except TypeError:
            continue
        return takes_info
    return None
