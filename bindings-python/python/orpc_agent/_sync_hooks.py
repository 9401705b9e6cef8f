"""Hooks the library calls synchronously (an audit subscriber, a progress
listener, a schema's ``validate``): an ``async def`` one would hand back a
coroutine that never runs, so it is refused where it is given."""

from __future__ import annotations

import inspect
from typing import Any


def refuse_async(fn: Any, what: str, *, noun: str = "function", instead: str = "") -> None:
    """Raises ``TypeError`` when ``fn`` is an ``async def`` function or an
    object whose ``__call__`` is one; ``instead`` says what to do."""
    if inspect.iscoroutinefunction(fn) or (callable(fn) and inspect.iscoroutinefunction(type(fn).__call__)):
        raise TypeError(
            f"{what} must be a plain {noun}: it is called synchronously, and an async one would never run{instead}"
        )
