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
    subclass with its message, ``NotFoundError("No order o-9.")``, or
    ``CapabilityError(code, message)``) to fail with its own code.
    ``repr``/``str`` show the code and message, never ``details``.
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
        if not isinstance(message, str):
            raise TypeError(f"a CapabilityError's message is a str, not {type(message).__name__}")
        if retryable is not None and type(retryable) is not bool:
            raise TypeError(f"a CapabilityError's retryable is True, False or None, not {type(retryable).__name__}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable: bool = bool(_native.default_retryable(code)) if retryable is None else retryable
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

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt by code, whatever the class's own signature (pickling
        # through ``args`` would hand the message where a code is expected).
        return (_rebuild, (type(self), self.code, self.message, self.retryable, self.details))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, retryable={self.retryable!r})"


class _CodedError(CapabilityError):
    """A class whose code is fixed: built with the message first,
    ``NotFoundError("No order o-9; list orders first.")``."""

    def __init__(self, message: str = "", *, retryable: bool | None = None, details: Any = None) -> None:
        super().__init__(type(self).code, message, retryable=retryable, details=details)


def _rebuild(cls: type[CapabilityError], code: str, message: str, retryable: bool, details: Any) -> CapabilityError:
    err = cls.__new__(cls)
    CapabilityError.__init__(err, code, message, retryable=retryable, details=details)
    return err


class NotFoundError(_CodedError):
    """``NOT_FOUND``: no such capability, or not exposed on this surface (same message either way)."""

    code = "NOT_FOUND"


class InvalidInputError(_CodedError):
    """``INVALID_INPUT``: the input failed validation; the message says why."""

    code = "INVALID_INPUT"


class PolicyDeniedError(_CodedError):
    """``POLICY_DENIED``: a policy denied the call (or failed, which denies)."""

    code = "POLICY_DENIED"


class ApprovalRequiredError(_CodedError):
    """``APPROVAL_REQUIRED``: for adapters that cannot show a pending outcome."""

    code = "APPROVAL_REQUIRED"


class ApprovalNotFoundError(_CodedError):
    code = "APPROVAL_NOT_FOUND"


class ApprovalPendingError(_CodedError):
    code = "APPROVAL_PENDING"


class ApprovalRejectedError(_CodedError):
    code = "APPROVAL_REJECTED"


class ApprovalExpiredError(_CodedError):
    code = "APPROVAL_EXPIRED"


class ApprovalConsumedError(_CodedError):
    code = "APPROVAL_CONSUMED"


class ApprovalInvalidError(_CodedError):
    code = "APPROVAL_INVALID"


class TimeoutCapabilityError(_CodedError, TimeoutError):
    """``TIMEOUT``: the deadline passed; the handler's task was cancelled and its result discarded."""

    code = "TIMEOUT"


class CancelledCapabilityError(_CodedError, asyncio.CancelledError):
    """``CANCELLED``: the caller cancelled. Also an ``asyncio.CancelledError``."""

    code = "CANCELLED"


class ExecutionFailedError(_CodedError):
    """``EXECUTION_FAILED``: the handler or a redactor raised; the original message stays on the server."""

    code = "EXECUTION_FAILED"


class OutputInvalidError(_CodedError):
    code = "OUTPUT_INVALID"


class LimitExceededError(_CodedError):
    code = "LIMIT_EXCEEDED"


class SessionNotFoundError(_CodedError):
    code = "SESSION_NOT_FOUND"


class CredentialRequiredError(_CodedError):
    code = "CREDENTIAL_REQUIRED"


class InternalError(_CodedError):
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
    cls = ERROR_CLASSES.get(code)
    if cls is None:
        return CapabilityError(code, message, retryable=retryable, details=details)
    return cls(message, retryable=retryable, details=details)


_native._install_error_factories(_capability_error, RegistryValidationError)
