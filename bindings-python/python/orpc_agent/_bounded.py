"""The rest of an ``async def`` handler that suspended on its eager first
step, run in the caller's own task — as ``await handler(...)`` would run
it — and bounded by the step's deadline (SI-9).

Why the caller's task: the first step already ran there, and asyncio's
own primitives a handler opens in it (``asyncio.timeout``, ``TaskGroup``,
``wait_for`` on 3.12+) bind to the task that runs it. Continued in a task
of its own, such a handler's timeout cancelled the *caller*: the call
ended CANCELLED and a ``CancelledError`` reached a caller nobody
cancelled, while the handler never saw its ``TimeoutError``.

How the deadline still holds: each time the handler waits on a future,
the task waits on a future of ours instead, settled by the handler's
future or by the deadline, whichever comes first. At the deadline the
handler is cancelled where it waits and, if it goes on, left to finish
in a task of its own that nobody awaits; the call answers
``HandlerTimedOut`` at once. A cancellation the task receives is thrown
into the handler where it waits, as the task itself would: one the
handler takes back (its own timeout, which ``uncancel``s) lets it go on;
one the caller still owes ends the call CANCELLED, and a handler that
goes on after it is left behind the same way.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Generator
from typing import Any

from . import _native
from ._app_errors import APP_FAILURES, _handler_failed

_CancelledError = asyncio.CancelledError
_DEADLINE = object()


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
            sent, thrown = yield from _forward(coro, yielded)
            try:
                yielded = coro.send(sent) if thrown is None else coro.throw(thrown)
            except StopIteration as stop:
                return stop.value


def _forward(coro: Any, yielded: Any) -> Generator[Any, Any, tuple[Any, BaseException | None]]:
    """Yields ``yielded`` to the task once; returns what the task sent, or
    what it threw in (the handler's to receive). The caller's coroutine
    closed closes the handler too."""
    try:
        sent = yield yielded
    except GeneratorExit:
        coro.close()
        raise
    except BaseException as exc:
        return None, exc
    return sent, None


def _retrieve(fut: asyncio.Future[Any]) -> None:
    """Done-callback of an abandoned handler: its result is discarded, and
    an exception is retrieved so asyncio does not log it as lost."""
    if not fut.cancelled():
        fut.exception()


class Suspended:
    """A handler stepped once, eagerly, that suspended yielding ``first``."""

    __slots__ = ("coro", "first")

    def __init__(self, coro: Any, first: Any) -> None:
        self.coro = coro
        self.first = first


class _Waiter:
    """The future the task waits on while the handler waits on its own."""

    __slots__ = ("future", "expired")

    def __init__(self) -> None:
        self.future: asyncio.Future[Any] | None = None
        self.expired = False

    def expire(self) -> None:
        self.expired = True
        if self.future is not None and not self.future.done():
            self.future.set_result(_DEADLINE)


def _wake(waiter: asyncio.Future[Any], _: Any) -> None:
    if not waiter.done():
        waiter.set_result(None)


def caller_owes_cancel(task: Any, base: int, thrown: bool) -> bool:
    """Whether the caller's task is still being cancelled: asked more
    times than when the handler started (3.11+, ``Task.cancelling``; a
    handler's own timeout takes its request back), else whether a
    cancellation was thrown in at all (3.10 has no ``asyncio.timeout``)."""
    cancelling = getattr(task, "cancelling", None)
    return cancelling() > base if cancelling is not None else thrown


def _left_behind(coro: Any, yielded: Any) -> None:
    """The handler goes on past its call: the rest runs in a task of its
    own that nobody awaits (its result is discarded, its exception
    retrieved)."""

    async def rest() -> Any:
        return await _Continue(coro, yielded)

    asyncio.ensure_future(rest()).add_done_callback(_retrieve)


def _cancel_late(coro: Any, yielded: Any) -> None:
    """The deadline passed: the handler is cancelled where it waits, as a
    task's cancellation would; if it goes on, it is left behind."""
    if isinstance(yielded, asyncio.Future):
        yielded.cancel()
    try:
        again = coro.throw(_CancelledError())
    except BaseException:  # finished one way or another: discarded
        return
    _left_behind(coro, again)


class _Bounded:
    __slots__ = ("inv", "coro", "first")

    def __init__(self, inv: Any, suspended: Suspended) -> None:
        self.inv, self.coro, self.first = inv, suspended.coro, suspended.first

    def __await__(self) -> Generator[Any, Any, tuple[int, Any]]:
        inv, coro, yielded = self.inv, self.coro, self.first
        self.coro = self.first = None
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        cancelling = getattr(task, "cancelling", None)
        base = cancelling() if cancelling is not None else 0
        waiter = _Waiter()
        timer = loop.call_later(inv.remaining_s(), waiter.expire)
        try:
            while True:
                sent: Any = None
                if isinstance(yielded, asyncio.Future) and yielded._asyncio_future_blocking:
                    mine = waiter.future = loop.create_future()
                    wake = functools.partial(_wake, mine)
                    yielded.add_done_callback(wake)
                    mine._asyncio_future_blocking = True
                    # Thrown in by the task: a cancellation, as a rule.
                    _, thrown = yield from _forward(coro, mine)
                    waiter.future = None
                    yielded.remove_done_callback(wake)
                    if thrown is None and mine.result() is _DEADLINE:
                        _cancel_late(coro, yielded)
                        return int(inv.answer(_native.ANSWER_HANDLER_TIMED_OUT)), None
                    if isinstance(thrown, _CancelledError):
                        yielded.cancel()  # what the handler waits on, as the task would
                else:
                    # A bare yield (``sleep(0)``), or whatever else the task judges itself.
                    sent, thrown = yield from _forward(coro, yielded)
                    if thrown is None and waiter.expired:
                        _cancel_late(coro, yielded)
                        return int(inv.answer(_native.ANSWER_HANDLER_TIMED_OUT)), None
                cancelled = isinstance(thrown, _CancelledError)
                try:
                    yielded = coro.send(sent) if thrown is None else coro.throw(thrown)
                except StopIteration as stop:
                    return int(inv.answer(_native.ANSWER_HANDLER_OK)), stop.value
                except APP_FAILURES as exc:
                    if isinstance(exc, _CancelledError) and caller_owes_cancel(task, base, cancelled):
                        raise  # the caller's: ``drive`` tells the core (CANCELLED)
                    return _handler_failed(inv, exc), None
                if cancelled and caller_owes_cancel(task, base, cancelled):
                    # The caller's cancellation, which the handler went past.
                    _left_behind(coro, yielded)
                    raise thrown  # type: ignore[misc]
        finally:
            timer.cancel()


async def run_bounded(inv: Any, suspended: Suspended) -> tuple[int, Any]:
    """The answer the handler's rest gives the core, and its output."""
    return await _Bounded(inv, suspended)
