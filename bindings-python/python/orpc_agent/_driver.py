"""The asyncio driver loop (DESIGN §4: the host drives, the core decides).

``drive`` reads the next step kind from the native ``Invocation`` (a small
integer), performs it — validate, evaluate a host policy, run the handler
under the deadline the step names, sleep, redact — and feeds the answer
back. Every crossing into Rust is a synchronous call; the handler's
coroutine is awaited here, by the event loop, never by Rust.

Nothing here decides governance: which step comes next, whether to retry,
how long to sleep, what fails closed, is read from the core.

Speed (DESIGN §11): an ``async def`` handler is first stepped eagerly, in
the caller's task; if it finishes without suspending (the common case for
a handler that does no I/O), no task and no timer are created. If it
suspends, it continues as a task raced against the deadline timer; at the
deadline the task is cancelled and its late result discarded (SI-9). Sync
handlers run in the loop's default executor so they never block the loop.

The pieces of the steps live beside it: ``_handler`` (start, continuation,
deadline race), ``_policy``, ``_step_values`` (exports, resume) and
``_app_errors`` (the answer for application code that raised).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any

from . import _native
from ._app_errors import APP_FAILURES, _invalid_input, _operator_log
from ._handler import RUN_HANDLER, _abandon, _CancelledError, _race_deadline, start_handler
from ._handler_hold import HandlerHold
from ._policy import _evaluate_policy
from ._step_values import _core_frame, _dump, _export_input, _handler_input, _redaction_info
from .postgres import settled
from .schema import to_jsonable
from .types import ApprovalRequest, ApprovalRequired, InvokeOk

if TYPE_CHECKING:
    from .capability import CapabilitySpec
    from .registry import CapabilityRegistry

VALIDATE_INPUT = _native.VALIDATE_INPUT
PERSIST_APPROVAL = _native.PERSIST_APPROVAL
CONSUME_APPROVAL = _native.CONSUME_APPROVAL
EVALUATE_POLICY = _native.EVALUATE_POLICY
EXPORT_INPUT = _native.EXPORT_INPUT
ASK_RETRY_ON = _native.ASK_RETRY_ON
SLEEP = _native.SLEEP
VALIDATE_OUTPUT = _native.VALIDATE_OUTPUT
REDACT_OUTPUT = _native.REDACT_OUTPUT
EXPORT_OUTPUT = _native.EXPORT_OUTPUT
DONE = _native.DONE
DONE_OK = _native.DONE_OK
SUSPENDED = _native.SUSPENDED
VALIDATOR_RAISED = _native.VALIDATOR_RAISED
HANDLER_RAISED = _native.HANDLER_RAISED


async def drive(
    registry: CapabilityRegistry,
    inv: Any,
    spec: CapabilitySpec | None,
    value: Any,
    frame: _native.Frame,
    k: int | None = None,
    output: Any = None,
    pending: asyncio.Future[Any] | None = None,
    hold: HandlerHold | None = None,
) -> InvokeOk[Any] | ApprovalRequired:
    """Runs one invocation to its outcome (or raises its CapabilityError).

    ``k``/``output``/``pending`` continue an invocation whose first steps
    the caller already performed (``CapabilityRegistry.invoke``'s fast path);
    ``hold`` holds it before its handler (an adapter's gate, ``_handler_hold``).
    """
    try:
        return await _drive_steps(registry, inv, spec, value, frame, k, output, pending, hold)
    except _CancelledError:
        # The caller cancelled at whichever step was awaited (a policy, a
        # redactor, a store step): the core ends the call CANCELLED and its
        # finished record is delivered; a call already finished keeps its
        # outcome (the core refuses a late answer).
        inv.answer(_native.ANSWER_CANCELLED)
        raise
    except BaseException:
        # The call's own error outcome (``finish`` raised it: the core keeps
        # it), or the driver itself failed: then the core ends the call
        # (INTERNAL) and the finished record it still owes is delivered.
        inv.abandon()
        raise


async def _drive_steps(
    registry: CapabilityRegistry,
    inv: Any,
    spec: CapabilitySpec | None,
    value: Any,
    frame: _native.Frame,
    k: int | None,
    output: Any,
    pending: asyncio.Future[Any] | None,
    hold: HandlerHold | None,
) -> InvokeOk[Any] | ApprovalRequired:
    if k is None:
        k = inv.advance()
    if spec is None and k != DONE and k != DONE_OK and k != CONSUME_APPROVAL:
        spec = registry._specs[inv.capability_index]
    if pending is not None:
        k, output = await _race_deadline(inv, pending)
    while True:
        if k == DONE_OK:
            return InvokeOk(output)
        if k == VALIDATE_INPUT:
            try:
                value = spec.input.validate(value)  # type: ignore[union-attr]
            except APP_FAILURES as exc:
                k = _invalid_input(inv, exc)
            else:
                k = inv.answer(_native.ANSWER_INPUT_VALID)
        elif k == RUN_HANDLER:
            if hold is not None:  # an adapter's gate: the call waits for its framework
                k, hold = await hold.step(inv), None
                continue
            if inv.resumed:
                if inv.attempt == 1:
                    frame = _core_frame(inv, frame)
                ok, value = _handler_input(inv, spec, value)  # type: ignore[arg-type]
                if not ok:
                    # The stored input no longer fits the capability's type (a
                    # request made before the model changed): the core ends
                    # the call; the error, which may quote the input, stays here.
                    k = int(inv.answer(_native.ANSWER_STORED_INPUT_UNUSABLE))
                    continue
            k, output, pending = start_handler(inv, spec, value, frame)  # type: ignore[arg-type]
            if pending is not None:
                k, output = await _race_deadline(inv, pending)
        elif k == VALIDATE_OUTPUT:
            try:
                output = spec.output.validate(output)  # type: ignore[union-attr]
            except APP_FAILURES:
                output = None
                k = inv.answer(_native.ANSWER_OUTPUT_INVALID)
            else:
                k = inv.answer(_native.ANSWER_OUTPUT_VALID)
        elif k == DONE:
            request = inv.finish()
            if request is None:
                return InvokeOk(output)
            return ApprovalRequired(ApprovalRequest.from_dict(request))
        elif k == EVALUATE_POLICY:
            k = await _evaluate_policy(registry, inv, spec, value, frame)  # type: ignore[arg-type]
        elif k == EXPORT_INPUT:
            k = _export_input(inv, spec.input, value)  # type: ignore[union-attr]
        elif k == REDACT_OUTPUT:
            caller_cancelled = False
            try:
                hook = spec.redact_output  # type: ignore[union-attr]
                if spec.redact_output_takes_info:  # type: ignore[union-attr]
                    redacted = hook(output, _redaction_info(inv, frame))  # type: ignore[misc]
                else:
                    redacted = hook(output)  # type: ignore[misc]
                late = False
                if inspect.isawaitable(redacted):
                    # Bounded by the call's deadline: a redactor that never
                    # finishes must not hold the call (the core decides
                    # what a late hook means).
                    task = asyncio.ensure_future(redacted)
                    try:
                        done, _ = await asyncio.wait((task,), timeout=inv.call_remaining_s())
                    except _CancelledError:
                        _abandon(task)
                        caller_cancelled = True
                        raise
                    if done:
                        redacted = task.result()
                    else:
                        _abandon(task)
                        late = True
            except APP_FAILURES as e:
                if caller_cancelled:
                    raise  # the caller's: ``drive`` tells the core
                output = None  # dropped: nothing unredacted leaves (SI-10)
                _operator_log(inv, "the output redactor", e)
                k = inv.answer(_native.ANSWER_REDACTOR_FAILED)
            else:
                if late:
                    output = None
                    k = inv.answer(_native.ANSWER_DEADLINE_PASSED)
                else:
                    output = redacted
                    k = inv.answer(_native.ANSWER_REDACTED)
        elif k == EXPORT_OUTPUT:
            try:
                dumped = _dump(spec.output, output) if spec else to_jsonable(output)
            except APP_FAILURES:
                dumped = None  # no JSON form: the audit payload is null (as in Node)
            k = inv.output_exported(dumped)
        elif k == ASK_RETRY_ON:
            try:
                verdict: Any = spec.retry_on(inv.retry_error())  # type: ignore[misc,union-attr]
            except APP_FAILURES:
                verdict = None  # a predicate that raises does not retry
            # The answer as given: only the boolean True retries, which the
            # glue converts and the core decides (not Python's truthiness:
            # "no" and 1 do not retry, as in Node).
            k = inv.answer(_native.ANSWER_RETRY_ON, None, verdict)
        elif k == _native.SLEEP:
            await asyncio.sleep(inv.sleep_s())  # a cancellation: ``drive`` tells the core
            k = inv.answer(_native.ANSWER_SLEPT)
        elif k == PERSIST_APPROVAL or k == CONSUME_APPROVAL:
            # Only a store that waits (PostgreSQL) hands its steps back: run
            # on the native runtime, awaited here without holding the GIL.
            # A cancellation meanwhile is told to the core after the store's
            # answer (``drive``): a consume that committed is consumed, as
            # in Node, never "nothing consumed" beside a consumed row.
            result, cancelled = await settled(_native.store_step(inv))
            k = _native.store_answered(inv, result)
            if cancelled:
                raise _CancelledError
            if spec is None and k != DONE and k != DONE_OK:
                spec = registry._specs[inv.capability_index]
        else:
            raise RuntimeError(f"orpc_agent: unknown step kind {k}")
