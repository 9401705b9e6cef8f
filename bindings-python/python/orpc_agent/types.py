"""Values the API hands out and takes back: outcomes, approval requests,
policy decisions, and what hooks are told. Plain Python objects — nothing
here decides anything.

``ReadOnlyDict`` and ``frozen_copy`` live in ``_read_only`` and are
re-exported here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ._native import Frame, InvokeOk
from ._read_only import ReadOnlyDict
from ._read_only import frozen_copy as frozen_copy

__all__ = [
    "Frame",
    "InvokeOk",
    "ApprovalRequired",
    "Outcome",
    "ApprovalRequest",
    "Allow",
    "Deny",
    "RequireApproval",
    "Abstain",
    "Decision",
    "PolicyRequest",
    "RedactionInfo",
    "HandlerContext",
    "ReadOnlyDict",
]


class ApprovalRequired:
    """The call needs an approval first (stage 8); ``request`` is persisted.
    Not an error: approve it through ``registry.approvals`` and ``resume``."""

    __slots__ = ("request",)
    status: Literal["approval_required"] = "approval_required"

    def __init__(self, request: ApprovalRequest) -> None:
        self.request = request

    def __repr__(self) -> str:
        # The request's repr names it without its input (which may be
        # anything the model sent): an outcome can be logged.
        return f"ApprovalRequired(status='approval_required', request={self.request!r})"


Outcome = InvokeOk[Any] | ApprovalRequired


@dataclass(frozen=True, repr=False)
class ApprovalRequest:
    """An approval request as stored (DESIGN §5). Times are unix milliseconds.

    ``input`` is the full validated input the hash binds (show it through
    ``registry.redact_approval_input``); ``repr``/``str`` leave it out, with
    the actor, so a request can be logged. The input hash itself stays in
    the store: no view shows it (a redacted value with few possible values
    could be recovered from it)."""

    id: str
    capability_id: str
    input: Any
    surface: str
    actor: dict[str, Any]
    type: str | None
    reason: str | None
    created_at: int
    expires_at: int
    #: As of the read: ``pending``, ``approved``, ``rejected``, ``consumed``,
    #: or ``expired`` (pending or approved, past ``expires_at``).
    status: str
    decided_by: str | None = None
    decided_at: int | None = None
    decision_reason: str | None = None
    #: The session of the call that asked (the frame's ``session_id``).
    session_id: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def actor_id(self) -> str | None:
        value = self.actor.get("id")
        return value if isinstance(value, str) else None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ApprovalRequest:
        return cls(
            id=d["id"],
            capability_id=d["capabilityId"],
            input=d.get("input"),
            surface=d["surface"],
            actor=d.get("actor") or {},
            type=d.get("type"),
            reason=d.get("reason"),
            created_at=d["createdAt"],
            expires_at=d["expiresAt"],
            status=d["status"],
            decided_by=d.get("decidedBy"),
            decided_at=d.get("decidedAt"),
            decision_reason=d.get("decisionReason"),
            session_id=d.get("sessionId"),
            raw=d,
        )

    def to_dict(self) -> dict[str, Any]:
        """The camelCase JSON form every binding shares."""
        return dict(self.raw)

    def __repr__(self) -> str:
        return (
            f"ApprovalRequest(id={self.id!r}, capability_id={self.capability_id!r}, status={self.status!r}, "
            f"type={self.type!r}, expires_at={self.expires_at!r})"
        )


# ----- policy decisions -------------------------------------------------


@dataclass(frozen=True)
class Allow:
    """The policy allows the call (later policies still run)."""


@dataclass(frozen=True)
class Deny:
    """Stops the call. ``reason`` is shown to the caller: write it for a model."""

    reason: str | None = None


@dataclass(frozen=True)
class RequireApproval:
    """Gates the call behind an approval (unless a later policy denies)."""

    type: str | None = None
    reason: str | None = None
    expires_in_ms: int | None = None


@dataclass(frozen=True)
class Abstain:
    """No opinion. (Returning ``None`` is not the same: a policy that answers
    nothing, or anything but a decision, failed — the call is denied.)"""


Decision = Allow | Deny | RequireApproval | Abstain


@dataclass(frozen=True, repr=False)
class PolicyRequest:
    """What a host policy sees: the validated input and the frozen frame,
    and the capability's declared metadata (read-only: ``side_effect``,
    ``risk``, ``tags``… as declared, in the core's camelCase JSON form).

    Frozen: no field can be reassigned, and ``actor`` is a read-only copy
    of the frame's actor (``ReadOnlyDict``, roles and lists as tuples).
    ``context`` is the application's own object, handed as is.
    ``repr`` shows neither the input nor the context."""

    capability_id: str
    input: Any
    frame: Frame
    context: Any
    meta: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def actor(self) -> Mapping[str, Any]:
        """The frame's actor ``{id?, roles, attributes}``, read-only."""
        return frozen_copy(self.frame.actor)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"PolicyRequest(capability_id={self.capability_id!r}, frame={self.frame!r})"


@dataclass(frozen=True, repr=False)
class RedactionInfo:
    """What a redactor is told (DESIGN §6). On a resumed approval, surface and
    actor are the ones recorded with the request.

    Frozen: no field can be reassigned, and ``actor`` is a read-only deep
    copy (``ReadOnlyDict``, roles and lists as tuples), made when the info
    is. ``context`` is the application's own object, handed as is.
    ``repr`` shows the actor's id only, not its attributes or the context."""

    surface: str
    capability_id: str
    actor: Mapping[str, Any]
    context: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "actor", frozen_copy(self.actor or {}))

    def __repr__(self) -> str:
        return (
            f"RedactionInfo(surface={self.surface!r}, capability_id={self.capability_id!r}, "
            f"actor_id={self.actor.get('id')!r})"
        )


@dataclass(frozen=True)
class HandlerContext:
    """The optional second argument of a handler."""

    capability_id: str
    attempt: int
    deadline_at_ms: int
    frame: Frame
    _invocation: Any = field(default=None, repr=False, compare=False)

    @property
    def context(self) -> Any:
        """The application context the caller put in the frame."""
        return self.frame.context

    def progress(self, done: int, total: int | None = None) -> bool:
        """Reports progress (``orpc_agent.progress``): ``True`` if the core
        accepted the report, ``False`` if it was dropped."""
        from .progress import report

        return report(self._invocation, done, total)
