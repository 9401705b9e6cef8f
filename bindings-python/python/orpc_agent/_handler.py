"""Starting a handler for a ``RunHandler`` step, and the machinery for one
that suspends: its continuation as a task, the race against the deadline
the step names, and abandoning what is late (SI-9).

Separate from the step loop (``_driver``) because the registry's fast path
continues a handler the native crossing already stepped
(``continue_handler``, ``start_handler``), and the policy and redactor
steps abandon a late hook with the same ``_abandon``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from . import _native
from ._app_errors import APP_FAILURES, _handler_failed
from .progress import report
from .types import HandlerContext

if TYPE_CHECKING:
    from .capability import CapabilitySpec

RUN_HANDLER = _native.RUN_HANDLER

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
    try:
        output = fut.result()
    except APP_FAILURES as exc:
        # Its own failure: ended cancelled too, since only the caller's
        # cancellation abandons it (above), so the handler cancelled itself.
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
        except APP_FAILURES as exc:  # its own CancelledError too: stepped here, nobody cancelled it
            return _handler_failed(inv, exc), None, None
        return RUN_HANDLER, None, continue_handler(coro, first)
    loop = asyncio.get_running_loop()
    call = functools.partial(contextvars.copy_context().run, spec.handler, *args)
    return RUN_HANDLER, None, loop.run_in_executor(None, call)
