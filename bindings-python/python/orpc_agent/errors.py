"""Typed errors: one ``CapabilityError`` subclass per core error code.

Codes, messages, ``retryable`` and ``kind`` come from the Rust core; this
module only gives each code a class a Python caller can ``except``. A few
also derive from the builtin a caller expects: ``TimeoutCapabilityError`` is a
``TimeoutError`` and ``CancelledCapabilityError`` an ``asyncio.CancelledError``
(so task cancellation keeps working through ``registry.invoke``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from . import _native

__all__ = [
    "CapabilityError",
    "NotFoundError",
    "InvalidInputError",
    "PolicyDeniedError",
    "ApprovalRequiredError",
    "ApprovalNotFoundError",
    "ApprovalPendingError",
    "ApprovalRejectedError",
    "ApprovalExpiredError",
    "ApprovalConsumedError",
    "ApprovalInvalidError",
    "TimeoutCapabilityError",
    "CancelledCapabilityError",
    "ExecutionFailedError",
    "OutputInvalidError",
    "LimitExceededError",
    "SessionNotFoundError",
    "CredentialRequiredError",
    "InternalError",
    "RegistryValidationError",
    "ERROR_CLASSES",
]


class CapabilityError(Exception):
    """The error an invocation ends in.

    ``code`` is the core's stable code (``"POLICY_DENIED"``, …), ``kind`` its
    ``std:`` error kind, ``message`` is written for a model to act on and
    never carries unredacted data. A handler may raise one itself (any
    subclass, or ``CapabilityError(code, message)``) to fail with its own code.
    """

    code: str = "EXECUTION_FAILED"

    def __init__(
        self,
        code: str | None = None,
        message: str = "",
        *,
        retryable: bool | None = None,
        details: Any = None,
    ) -> None:
        code = code or type(self).code
        if _native.error_kind(code) is None:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        default = _native.default_retryable(code)
        self.retryable: bool = bool(default) if retryable is None else retryable
        self.details = details

    @property
    def kind(self) -> str:
        """The ``std:`` error kind (``std:not-found``, ``std:timeout``, …)."""
        return _native.error_kind(self.code) or "std:internal"

    def to_dict(self) -> dict[str, Any]:
        """``{code, message, retryable, kind, details?}``, as every binding shows it."""
        out: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "kind": self.kind,
        }
        if self.details is not None:
            out["details"] = self.details
        return out

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, retryable={self.retryable!r})"


class NotFoundError(CapabilityError):
    """``NOT_FOUND``: no such capability, or not exposed on this surface (same message either way)."""

    code = "NOT_FOUND"


class InvalidInputError(CapabilityError):
    """``INVALID_INPUT``: the input failed validation; the message says why."""

    code = "INVALID_INPUT"


class PolicyDeniedError(CapabilityError):
    """``POLICY_DENIED``: a policy denied the call (or failed, which denies)."""

    code = "POLICY_DENIED"


class ApprovalRequiredError(CapabilityError):
    """``APPROVAL_REQUIRED``: for adapters that cannot show a pending outcome."""

    code = "APPROVAL_REQUIRED"


class ApprovalNotFoundError(CapabilityError):
    code = "APPROVAL_NOT_FOUND"


class ApprovalPendingError(CapabilityError):
    code = "APPROVAL_PENDING"


class ApprovalRejectedError(CapabilityError):
    code = "APPROVAL_REJECTED"


class ApprovalExpiredError(CapabilityError):
    code = "APPROVAL_EXPIRED"


class ApprovalConsumedError(CapabilityError):
    code = "APPROVAL_CONSUMED"


class ApprovalInvalidError(CapabilityError):
    code = "APPROVAL_INVALID"


class TimeoutCapabilityError(CapabilityError, TimeoutError):
    """``TIMEOUT``: the deadline passed; the handler's task was cancelled and its result discarded."""

    code = "TIMEOUT"


class CancelledCapabilityError(CapabilityError, asyncio.CancelledError):
    """``CANCELLED``: the caller cancelled. Also an ``asyncio.CancelledError``."""

    code = "CANCELLED"


class ExecutionFailedError(CapabilityError):
    """``EXECUTION_FAILED``: the handler or a redactor raised; the original message stays on the server."""

    code = "EXECUTION_FAILED"


class OutputInvalidError(CapabilityError):
    code = "OUTPUT_INVALID"


class LimitExceededError(CapabilityError):
    code = "LIMIT_EXCEEDED"


class SessionNotFoundError(CapabilityError):
    code = "SESSION_NOT_FOUND"


class CredentialRequiredError(CapabilityError):
    code = "CREDENTIAL_REQUIRED"


class InternalError(CapabilityError):
    code = "INTERNAL"


ERROR_CLASSES: dict[str, type[CapabilityError]] = {
    cls.code: cls
    for cls in (
        NotFoundError,
        InvalidInputError,
        PolicyDeniedError,
        ApprovalRequiredError,
        ApprovalNotFoundError,
        ApprovalPendingError,
        ApprovalRejectedError,
        ApprovalExpiredError,
        ApprovalConsumedError,
        ApprovalInvalidError,
        TimeoutCapabilityError,
        CancelledCapabilityError,
        ExecutionFailedError,
        OutputInvalidError,
        LimitExceededError,
        SessionNotFoundError,
        CredentialRequiredError,
        InternalError,
    )
}


class RegistryValidationError(ValueError):
    """The declarations have problems — all of them, at once (SI-4).

    ``problems`` is a list of ``{"capability", "path", "code", "message"}``
    dicts (``capability`` is ``None`` for runtime options).
    """

    def __init__(self, message: str, problems: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.problems = problems


def _capability_error(code: str, message: str, retryable: bool, kind: str, details: Any) -> CapabilityError:
    """Factory the native module calls to build the exception for a core error."""
    cls = ERROR_CLASSES.get(code, CapabilityError)
    return cls(code, message, retryable=retryable, details=details)


_native._install_error_factories(_capability_error, RegistryValidationError)
