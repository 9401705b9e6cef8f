"""Values the API hands out and takes back: outcomes, approval requests,
policy decisions, and what hooks are told. Plain Python objects — nothing
here decides anything."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ._native import Frame, InvokeOk

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
]

class ApprovalRequired:
    """The call needs an approval first (stage 8); ``request`` is persisted.
    Not an error: approve it through ``registry.approvals`` and ``resume``."""

    __slots__ = ("request",)
    status: Literal["approval_required"] = "approval_required"

    def __init__(self, request: ApprovalRequest) -> None:
        self.request = request

    def __repr__(self) -> str:
        return f"ApprovalRequired(request={self.request!r})"


Outcome = InvokeOk[Any] | ApprovalRequired


@dataclass(frozen=True)
class ApprovalRequest:
    """An approval request as stored (DESIGN §5). Times are unix milliseconds."""

    id: str
    capability_id: str
    input_hash: str
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
            input_hash=d["inputHash"],
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
            raw=d,
        )

    def to_dict(self) -> dict[str, Any]:
        """The camelCase JSON form every binding shares."""
        return dict(self.raw)


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
    """No opinion. Returning ``None`` from a policy means the same."""


Decision = Allow | Deny | RequireApproval | Abstain


@dataclass(frozen=True)
class PolicyRequest:
    """What a host policy sees: the validated input and the frozen frame,
    and the capability's declared metadata (read-only: ``side_effect``,
    ``risk``, ``tags``… as declared, in the core's camelCase JSON form)."""

    capability_id: str
    input: Any
    frame: Frame
    context: Any
    meta: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class RedactionInfo:
    """What a redactor is told (DESIGN §6). On a resumed approval, surface and
    actor are the ones recorded with the request."""

    surface: str
    capability_id: str
    actor: dict[str, Any]
    context: Any = None


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
