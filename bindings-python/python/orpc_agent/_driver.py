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
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import logging
from collections.abc import Callable, Generator
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from . import _native
from .errors import CapabilityError
from .postgres import wait
from .progress import report
from .schema import InputIssues, rebuilds, restore, to_jsonable
from .types import (
    Abstain,
    Allow,
    ApprovalRequest,
    ApprovalRequired,
    Deny,
    HandlerContext,
    InvokeOk,
    PolicyRequest,
    RedactionInfo,
    RequireApproval,
)

_log = logging.getLogger("orpc_agent")

if TYPE_CHECKING:
    from .capability import CapabilitySpec
    from .registry import CapabilityRegistry

VALIDATE_INPUT = _native.VALIDATE_INPUT
PERSIST_APPROVAL = _native.PERSIST_APPROVAL
CONSUME_APPROVAL = _native.CONSUME_APPROVAL
EVALUATE_POLICY = _native.EVALUATE_POLICY
EXPORT_INPUT = _native.EXPORT_INPUT
RUN_HANDLER = _native.RUN_HANDLER
ASK_RETRY_ON = _native.ASK_RETRY_ON
SLEEP = _native.SLEEP
VALIDATE_OUTPUT = _native.VALIDATE_OUTPUT
REDACT_OUTPUT = _native.REDACT_OUTPUT
EXPORT_OUTPUT = _native.EXPORT_OUTPUT
DONE = _native.DONE
DONE_OK = _native.DONE_OK
#: A host policy's decision codes by name (the core's ``ffi::decision_code``).
_DECISION_CODE: dict[str, int] = _native.DECISION_CODE
SUSPENDED = _native.SUSPENDED
VALIDATOR_RAISED = _native.VALIDATOR_RAISED
HANDLER_RAISED = _native.HANDLER_RAISED

_CancelledError = asyncio.CancelledError


class _Continue:
    """Awaits a coroutine that was already stepped once and yielded
    ``first``: the ``await`` protocol, resumed where the eager step left
    off, so the rest can run as a task."""

    __slots__ = ("coro", "first")

    def __init__(self, coro: Any, first: Any) -> None:
        self.coro = coro
        self.first = first

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, yielded = self.coro, self.first
        self.coro = self.first = None
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:
                try:
                    yielded = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    yielded = coro.send(sent)
                except StopIteration as stop:
                    return stop.value


async def _rest_of(coro: Any, first: Any) -> Any:
    return await _Continue(coro, first)


def continue_handler(coro: Any, first: Any) -> asyncio.Future[Any]:
    """The rest of an eagerly stepped handler, as a task of its own."""
    return asyncio.ensure_future(_rest_of(coro, first))


def _retrieve(fut: asyncio.Future[Any]) -> None:
    """Done-callback of an abandoned handler: its result is discarded, and
    an exception is retrieved so asyncio does not log it as lost."""
    if not fut.cancelled():
        fut.exception()


def _abandon(fut: asyncio.Future[Any]) -> None:
    fut.cancel()
    fut.add_done_callback(_retrieve)


#: pydantic error types whose message ends in the text of an exception that
#: application code raised (a validator's ``ValueError``/``assert``, a
#: getter, an iterator, a mapping): that text may quote the input or hold a
#: secret (``int('4111…')``, a connection string), so only pydantic's own
#: words are kept. A message meant for the model is raised as
#: ``PydanticCustomError`` or :class:`InputIssues`.
_EXCEPTION_TEXT = {
    "value_error": "Value error",
    "assertion_error": "Assertion failed",
    "get_attribute_error": "Error extracting attribute",
    "iteration_error": "Error iterating over object",
    "mapping_type": "Input should be a valid mapping",
}


def _invalid_input(inv: Any, exc: BaseException) -> int:
    """Stage 4's answer for a validator that raised: its issues (pydantic's
    field paths and reasons, or a :class:`InputIssues`), from which the core
    writes the model's message; anything else only says the input could
    not be validated — an exception's text may quote the input (SI-10)."""
    if isinstance(exc, InputIssues):
        return _issues_answer(inv, [([str(p) for p in path], str(msg)) for path, msg in exc.issues])
    errors = getattr(exc, "errors", None)
    if callable(errors):  # pydantic.ValidationError
        withheld = False
        try:
            issues = []
            for e in errors(include_url=False, include_input=False, include_context=False):
                msg = _EXCEPTION_TEXT.get(e.get("type"))
                withheld = withheld or msg is not None
                issues.append(([str(p) for p in e.get("loc", ())], msg if msg is not None else str(e.get("msg"))))
        except Exception:
            issues = []
        if withheld or not issues:
            _operator_log(inv, "the input validator", exc)
        if issues:
            return _issues_answer(inv, issues)
    else:
        _operator_log(inv, "the input validator", exc)
    return int(inv.answer(_native.ANSWER_INPUT_VALIDATOR_FAILED))


def _issues_answer(inv: Any, issues: list[tuple[list[str], str]]) -> int:
    """The validator's issues as the core reads them (``ffi::answer``)."""
    text = json.dumps([{"path": path, "message": message} for path, message in issues])
    return int(inv.answer(_native.ANSWER_INPUT_ISSUES, text))


def _operator_log(inv: Any, what: str, exc: BaseException) -> None:
    """Tells the operator what application code raised, with the real
    exception (type, message, traceback) on the ``orpc_agent`` logger; the
    caller and the model only ever get the core's generic error."""
    _log.warning(
        "orpc_agent: %s of capability %s failed; the caller was only told that it failed",
        what,
        inv.capability_id,
        exc_info=exc,
    )


def _handler_failed(inv: Any, exc: BaseException) -> int:
    if isinstance(exc, CapabilityError):
        return int(inv.handler_error(exc.code, exc.message, exc.retryable))
    # A plain exception: the core replaces it by a generic EXECUTION_FAILED;
    # its text never reaches the caller (SI-10), only the operator's log.
    _operator_log(inv, "the handler", exc)
    return int(inv.handler_error(None, type(exc).__name__, False))


async def _race_deadline(inv: Any, fut: asyncio.Future[Any]) -> tuple[int, Any]:
    """Waits for the handler until the deadline the step named."""
    try:
        done, _ = await asyncio.wait((fut,), timeout=inv.remaining_s())
    except _CancelledError:
        # The caller cancelled: drop the handler and let the cancellation
        # propagate; ``drive`` tells the core (audit records CANCELLED).
        _abandon(fut)
        raise
    if not done:
        _abandon(fut)
        return int(inv.answer(_native.ANSWER_HANDLER_TIMED_OUT)), None
    if fut.cancelled():
        return inv.answer(_native.ANSWER_CANCELLED), None
    exc = fut.exception()
    if exc is None:
        return int(inv.answer(_native.ANSWER_HANDLER_OK)), fut.result()
    if isinstance(exc, _CancelledError):
        return int(inv.answer(_native.ANSWER_CANCELLED)), None
    return _handler_failed(inv, exc), None


async def _streamed(stream: Any, inv: Any) -> Any:
    """A streaming handler (an ``async def`` with ``yield``): each value it
    yields is a progress report (``done`` = values this attempt yielded,
    checked by the core like any report, so after a retry the count is
    dropped until it passes the furthest report; no payload leaves before
    validation and redaction), and its output is the last value it
    yielded. The deadline and the caller's cancellation stop it: they
    cancel this coroutine where the generator awaits, and ``aclose`` runs
    its ``finally``."""
    last = None
    yielded = 0
    try:
        async for value in stream:
            last = value
            yielded += 1
            report(inv, yielded)
    finally:
        await stream.aclose()
    return last


def start_handler(
    inv: Any, spec: CapabilitySpec, value: Any, frame: _native.Frame
) -> tuple[int, Any, asyncio.Future[Any] | None]:
    """Starts the handler for a ``RunHandler`` step.

    Returns ``(next_kind, output, None)`` when it finished at once (an
    ``async def`` stepped eagerly that never suspended), else
    ``(RUN_HANDLER, None, future)``: the rest of it, to race against the
    deadline with ``_race_deadline``.
    """
    args: tuple[Any, ...]
    if spec.wants_context:
        args = (value, HandlerContext(spec.id, inv.attempt, inv.deadline_at_ms, frame, inv))
    else:
        args = (value,)
    if spec.is_async or spec.is_stream:
        coro = _streamed(spec.handler(*args), inv) if spec.is_stream else spec.handler(*args)
        try:
            first = coro.send(None)
        except StopIteration as stop:
            return inv.answer(_native.ANSWER_HANDLER_OK), stop.value, None
        except _CancelledError:
            return inv.answer(_native.ANSWER_CANCELLED), None, None
        except Exception as exc:
            return _handler_failed(inv, exc), None, None
        return RUN_HANDLER, None, continue_handler(coro, first)
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, spec.handler, *args)
    return RUN_HANDLER, None, loop.run_in_executor(None, call)


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
    request = PolicyRequest(spec.id, value, frame, frame.context, MappingProxyType(spec.meta))
    try:
        result = fn(request)
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            try:
                done, _ = await asyncio.wait((task,), timeout=timeout_s)
            except _CancelledError:
                _abandon(task)
                raise
            if not done:
                _abandon(task)
                _policy_failed_log(spec.id, scope, index, "did not answer in time")
                return int(inv.answer(_native.ANSWER_POLICY_FAILED))
            result = task.result()
    except _CancelledError:
        raise
    except Exception as e:
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


def _redaction_info(inv: Any, frame: _native.Frame) -> RedactionInfo:
    info = inv.redaction_info()
    return RedactionInfo(info["surface"], info["capabilityId"], info.get("actor") or {}, frame.context)


def _dump(schema: Any, value: Any) -> Any:
    return schema.dump(value) if schema is not None else to_jsonable(value)


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def _export_input(inv: Any, schema: Any, value: Any) -> int:
    """Answers ``ExportInput``: the validated input's JSON form, which the
    core judges (predicates), hashes and stores, and from which a resumed
    handler gets its input back (``restore``, no validation). A form that
    does not give the value back exactly (a lossy serializer, an excluded
    field that was set, a value of a type JSON does not carry back) is not
    a form of this value: not exportable, so nothing is bound to it."""
    try:
        dumped = _dump(schema, value)
    except Exception as e:
        # A serializer that raises: the core ends the call (INVALID_INPUT,
        # audited) with its own reason; the app's CapabilityError says its own.
        return int(
            inv.answer(_native.ANSWER_INPUT_NOT_EXPORTABLE, e.message if isinstance(e, CapabilityError) else None)
        )
    if not rebuilds(schema, value, dumped) and _is_json(dumped):
        # (Text without a JSON form — NaN, a value no JSON holds — is
        # handed over as is: the core names why it cannot be bound.)
        return int(inv.answer(_native.ANSWER_INPUT_NOT_REBUILT))
    return int(inv.input_exported(dumped))


def _handler_input(inv: Any, spec: CapabilitySpec, value: Any) -> tuple[bool, Any]:
    """The handler's input for this ``RunHandler`` step: on resume, the
    stored validated input, restored without validating it again (it was
    validated once, before its hash bound it; the approver saw it)."""
    stored = inv.input_json()
    if stored is None:
        return True, value
    try:
        return True, restore(spec.input, stored)
    except Exception:
        return False, None


def _resumed_frame(inv: Any, frame: _native.Frame) -> _native.Frame:
    """On resume, hooks see the recorded surface and actor (SI-3)."""
    f = inv.frame()
    trace = f.get("trace") or {}
    return _native.Frame(
        f["surface"],
        actor=f.get("actor"),
        traceparent=trace.get("traceparent"),
        tracestate=trace.get("tracestate"),
        request_id=f.get("requestId"),
        agent_id=f.get("agentId"),
        session_id=f.get("sessionId"),
        context=frame.context,
    )


async def drive(
    registry: CapabilityRegistry,
    inv: Any,
    spec: CapabilitySpec | None,
    value: Any,
    frame: _native.Frame,
    k: int | None = None,
    output: Any = None,
    pending: asyncio.Future[Any] | None = None,
) -> InvokeOk[Any] | ApprovalRequired:
    """Runs one invocation to its outcome (or raises its CapabilityError).

    ``k``/``output``/``pending`` continue an invocation whose first steps
    the caller already performed (``CapabilityRegistry.invoke``'s fast path).
    """
    try:
        return await _drive_steps(registry, inv, spec, value, frame, k, output, pending)
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
            except Exception as exc:
                k = _invalid_input(inv, exc)
            else:
                k = inv.answer(_native.ANSWER_INPUT_VALID)
        elif k == RUN_HANDLER:
            if inv.resumed:
                if inv.attempt == 1:
                    frame = _resumed_frame(inv, frame)
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
            except Exception:
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
                        raise
                    if done:
                        redacted = task.result()
                    else:
                        _abandon(task)
                        late = True
            except _CancelledError:
                raise
            except Exception as e:
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
            except Exception:
                dumped = None  # no JSON form: the audit payload is null (as in Node)
            k = inv.output_exported(dumped)
        elif k == ASK_RETRY_ON:
            try:
                verdict: Any = spec.retry_on(inv.retry_error())  # type: ignore[misc,union-attr]
            except Exception:
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
            k = _native.store_answered(inv, await wait(_native.store_step(inv)))
            if spec is None and k != DONE and k != DONE_OK:
                spec = registry._specs[inv.capability_index]
        else:
            raise RuntimeError(f"orpc_agent: unknown step kind {k}")


def run_sync(coro_fn: Callable[[], Any]) -> Any:
    """Runs a coroutine function to completion for hosts without an event loop.

    Not ``asyncio.run``: closing its loop waits for the default executor's
    threads, so a sync handler past its deadline (Python cannot stop a
    thread) would hold the caller until it returned, long after its TIMEOUT.
    This returns when the call does, as ``await registry.invoke`` does; the
    thread finishes on its own and its result is discarded (SI-9).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("invoke_sync called from a running event loop; use `await registry.invoke(...)`")
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(coro_fn())
    finally:
        try:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()  # shuts the executor down without waiting for its threads
