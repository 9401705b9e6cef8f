"""``run_sync``: a governed call run to completion for hosts without an
event loop (``invoke_sync``, ``resume_sync``); ``cancel_requested``: whether
the calling task was already asked to cancel.

Separate from the step loop (``_driver``): it owns an event loop of its own
and that loop's shutdown, not a step of a call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


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


def cancel_requested() -> bool:
    """Whether the calling task has been asked to cancel (Python 3.11+:
    ``Task.cancelling``), though it has not ended: a task that caught its
    ``CancelledError`` and goes on. A resume then consumes nothing (the
    core ends it CANCELLED before its consume step)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return False  # no asyncio loop runs the call (anyio on trio, a host that steps it): no task to ask
    cancelling = getattr(task, "cancelling", None)
    return cancelling is not None and cancelling() > 0
