"""The approval-input view an approval UI shows (``redact_approval_input``):
the capability's ``redact_approval_input`` hook over the stored input,
with the request's recorded surface and actor. Apart from the registry so
that module stays whole, and so the hook's failure rule is in one place.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from typing import Any

from . import _native
from ._app_errors import APP_FAILURES
from .capability import CapabilitySpec
from .errors import ExecutionFailedError, InternalError
from .schema import restore
from .types import ApprovalRequest, RedactionInfo


async def approval_view(
    spec: CapabilitySpec, request: ApprovalRequest, info: Any, context: Any, timeout_ms: int
) -> Any:
    """The view, or ``ExecutionFailedError`` in the core's words when the
    hook fails (raises, its own ``CancelledError`` too) or an async hook
    outlasts ``timeout_ms`` (the core's bound: it is cancelled and not
    awaited, so it holds no approval UI or MCP call): never the input. An
    async hook runs as a task of its own, so a cancellation of the caller
    (at the wait) is told from the hook's own (its result)."""
    redactor = spec.redact_approval_input
    if redactor is None:  # unreachable: the core refuses the build (a declared hook with no implementation)
        raise InternalError("no approval-input redactor")
    try:
        # The stored input as the capability's type (a pydantic model for a
        # model schema), restored without validating it again: the value
        # the hash binds, unchanged.
        value = restore(spec.input, copy.deepcopy(request.input))
        if spec.redact_approval_input_takes_info:
            view = redactor(value, RedactionInfo(info["surface"], info["capabilityId"], info["actor"], context))
        else:
            view = redactor(value)
    except APP_FAILURES as exc:
        raise ExecutionFailedError(_native.APPROVAL_VIEW_FAILED_MESSAGE) from exc
    if not inspect.isawaitable(view):
        return view
    task = asyncio.ensure_future(view)
    try:
        done, _ = await asyncio.wait((task,), timeout=timeout_ms / 1000)
    except asyncio.CancelledError:
        task.cancel()  # the caller's: the hook stops too
        raise
    if not done:
        task.cancel()  # past its bound: not awaited
        raise ExecutionFailedError(_native.APPROVAL_VIEW_FAILED_MESSAGE)
    try:
        return task.result()
    except APP_FAILURES as exc:  # its own CancelledError too
        raise ExecutionFailedError(_native.APPROVAL_VIEW_FAILED_MESSAGE) from exc
