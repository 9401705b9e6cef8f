"""The ``EvaluatePolicy`` step: runs a host policy (a sync or async
callable, bounded by the timeout the core names) and answers its decision.
A policy that raises, does not answer in time or answers something that is
not a decision is answered as failed, which denies (fail closed).

Separate from the step loop (``_driver``): what a host policy's answer
means is converted here, in one place; the loop only awaits the answer.
"""

from __future__ import annotations

import asyncio
import inspect
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from . import _native
from ._app_errors import APP_FAILURES, _log, _operator_log
from ._handler import _abandon, _CancelledError
from ._step_values import _core_frame
from .types import Abstain, Allow, Deny, PolicyRequest, RequireApproval

if TYPE_CHECKING:
    from .capability import CapabilitySpec
    from .registry import CapabilityRegistry

#: A host policy's decision codes by name (the core's ``ffi::decision_code``).
_DECISION_CODE: dict[str, int] = _native.DECISION_CODE


def _decision_answer(inv: Any, decision: Any, capability_id: str, scope: int, index: int) -> int:
    # Only a decision object is a decision: ``None`` (a policy that forgot
    # to return) or any other value is a failed policy, which denies, as in
    # every binding (issue 14).
    if isinstance(decision, Abstain):
        return int(inv.policy_decision(_DECISION_CODE["abstain"]))
    if isinstance(decision, Allow):
        return int(inv.policy_decision(_DECISION_CODE["allow"]))
    if isinstance(decision, Deny):
        return int(inv.policy_decision(_DECISION_CODE["deny"], decision.reason))
    if isinstance(decision, RequireApproval):
        return int(
            inv.policy_decision(
                _DECISION_CODE["requireApproval"], decision.reason, decision.type, decision.expires_in_ms
            )
        )
    # Not a decision: the policy failed, which denies (fail closed).
    _policy_failed_log(capability_id, scope, index, f"answered {type(decision).__name__}, not a decision")
    return int(inv.answer(_native.ANSWER_POLICY_FAILED))


async def _evaluate_policy(
    registry: CapabilityRegistry, inv: Any, spec: CapabilitySpec, value: Any, frame: _native.Frame
) -> int:
    scope, index, timeout_s = inv.policy_at()
    fn = registry._runtime_policies.get(index) if scope == 0 else spec.policies.get(index)
    if fn is None:
        return int(inv.answer(_native.ANSWER_POLICY_FAILED))
    request = PolicyRequest(spec.id, value, _core_frame(inv, frame), frame.context, MappingProxyType(spec.meta))
    caller_cancelled = False
    try:
        result = fn(request)
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            try:
                done, _ = await asyncio.wait((task,), timeout=timeout_s)
            except _CancelledError:
                _abandon(task)
                caller_cancelled = True
                raise
            if not done:
                _abandon(task)
                _policy_failed_log(spec.id, scope, index, "did not answer in time")
                return int(inv.answer(_native.ANSWER_POLICY_FAILED))
            result = task.result()
    except APP_FAILURES as e:
        if caller_cancelled:
            raise  # the caller's: ``drive`` tells the core
        _policy_failed_log(spec.id, scope, index, f"raised {type(e).__name__}")
        _operator_log(inv, f"{'runtime' if scope == 0 else 'capability'} policy #{index}", e)
        return int(inv.answer(_native.ANSWER_POLICY_FAILED))
    return _decision_answer(inv, result, spec.id, scope, index)


def _policy_failed_log(capability_id: str, scope: int, index: int, what: str) -> None:
    """A failing host policy denies (fail closed) and says so to the
    operator: which policy, and the exception's type — never its message,
    which may quote the input (SI-10)."""
    where = f"runtime policy #{index}" if scope == 0 else f"policy #{index} of {capability_id}"
    _log.warning("orpc_agent: %s %s; the call is denied", where, what)
