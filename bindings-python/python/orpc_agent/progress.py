"""Progress a handler reports from inside a call (spec/004 ``std:progress``).

A handler that takes a ``HandlerContext`` calls ``ctx.progress(done,
total=None)``. The core checks each report (``pipeline::progress``: ``done``
strictly increases, ``done <= total``, a total is fixed once given) and keeps
the state per invocation, across retries. A rejected report is dropped and
``progress`` returns ``False``; the call goes on (progress is advisory).

Accepted reports go to the listener of the calling scope::

    with on_progress(lambda e: print(e.done, e.total)):
        await registry.invoke("export", {...})

The MCP adapter uses the same scope to send ``notifications/progress`` when
the client sent a ``progressToken``. The listener is a context variable, so
it follows the call into async tasks and executor threads; a handler that
invokes other capabilities passes it on unless it opens its own scope
(``on_progress(None)``).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ._sync_hooks import refuse_async

__all__ = ["ProgressEvent", "ProgressListener", "on_progress", "report"]


@dataclass(frozen=True)
class ProgressEvent:
    """One accepted report; ``total`` is carried forward once given."""

    done: int
    total: int | None = None


ProgressListener = Callable[[ProgressEvent], None]

_LISTENER: contextvars.ContextVar[ProgressListener | None] = contextvars.ContextVar(
    "orpc_agent_progress_listener", default=None
)


@contextmanager
def on_progress(listener: ProgressListener | None) -> Iterator[None]:
    """Delivers the progress of invocations made inside the block to ``listener``
    (a plain function: it is called synchronously as each report is accepted;
    an ``async def`` one would never run and is refused with ``TypeError``)."""
    if listener is not None:
        refuse_async(listener, "progress listener", instead="; hand each event to a queue or a task of your own")
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def report(invocation: Any, done: Any, total: Any = None) -> bool:
    """Checks a report with the core (the invocation's checker) and delivers it."""
    if invocation is None:
        return False
    try:
        event = invocation.progress(done, total)
    except Exception:  # e.g. the invocation is busy on another thread
        return False
    if event is None:
        return False
    listener = _LISTENER.get()
    if listener is not None:
        try:
            listener(ProgressEvent(event[0], event[1]))
        except (Exception, asyncio.CancelledError):
            pass  # a listener's failure (its own CancelledError too) does not change the call
    return True
