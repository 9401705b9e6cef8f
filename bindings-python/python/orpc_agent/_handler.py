"""Starting a handler for a ``RunHandler`` step, the race against the
deadline the step names (an ``async def`` that suspended goes on in the
caller's task, ``_bounded``; a sync one in a thread), and abandoning what
is late (SI-9).

Separate from the step loop (``_driver``) because the registry's fast path
continues a handler the native crossing already stepped (``Suspended``,
``start_handler``), and the policy and redactor steps abandon a late hook
with the same ``_abandon``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from typing import TYPE_CHECKING, Any

from . import _native
from ._app_errors import APP_FAILURES, _handler_failed
from ._bounded import Suspended, _retrieve, run_bounded
from .progress import report
from .types import HandlerContext

if TYPE_CHECKING:
    from .capability import CapabilitySpec

RUN_HANDLER = _native.RUN_HANDLER

_CancelledError = asyncio.CancelledError


def _abandon(fut: asyncio.Future[Any]) -> None:
    fut.cancel()
    fut.add_done_callback(_retrieve)


async def _race_deadline(inv: Any, fut: asyncio.Future[Any] | Suspended) -> tuple[int, Any]:
    """Waits for the handler until the deadline the step named: the rest of
    an ``async def`` in the caller's task (``_bounded``), a sync handler's
    thread."""
    if isinstance(fut, Suspended):
        return await run_bounded(inv, fut)
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
    # Ended cancelled without the caller cancelling (only the caller's
    # cancellation abandons it, above): the handler cancelled itself, its
    # own failure (``APP_FAILURES``).
    try:
        output = fut.result()
    except APP_FAILURES as exc:  # cancelled too: only the caller's cancellation abandons it, above
        return _handler_failed(inv, exc), None
    return int(inv.answer(_native.ANSWER_HANDLER_OK)), output


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
) -> tuple[int, Any, asyncio.Future[Any] | Suspended | None]:
    """Starts the handler for a ``RunHandler`` step.

    Returns ``(next_kind, output, None)`` when it finished at once (an
    ``async def`` stepped eagerly that never suspended), else
    ``(RUN_HANDLER, None, pending)``: the rest of it (``Suspended``, or a
    sync handler's thread), to race against the deadline with
    ``_race_deadline``.
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
        except APP_FAILURES as exc:  # its own CancelledError too: stepped here, nobody cancelled it
            return _handler_failed(inv, exc), None, None
        return RUN_HANDLER, None, Suspended(coro, first)
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, spec.handler, *args)
    return RUN_HANDLER, None, loop.run_in_executor(None, call)
