"""A manual event-loop clock for the pipeline vectors (tests/vectors/README.md).

The loop's ``time()`` is a virtual clock in whole milliseconds. When the loop
would block waiting for a timer, the selector jumps the clock to that timer
instead of sleeping; real I/O (the loop's self-pipe, executor wake-ups) is
still polled first. So deadlines, backoff and approval expiry are exact and
instant, and the registry's clock (unix ms) reads the same virtual time.
"""

from __future__ import annotations

import asyncio
import selectors
from typing import Any


class VirtualClock:
    def __init__(self, start_ms: int = 1_000_000) -> None:
        self.start_ms = start_ms
        self.elapsed_ms = 0

    def now_ms(self) -> int:
        return self.start_ms + self.elapsed_ms

    def advance_s(self, seconds: float) -> None:
        self.elapsed_ms += max(0, round(seconds * 1000))


class _VirtualSelector(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
    clock: VirtualClock

    def select(self, timeout: float | None = None) -> list[Any]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            return super().select(None)
        self.clock.advance_s(timeout)
        return []


class VirtualLoop(asyncio.SelectorEventLoop):
    def __init__(self, clock: VirtualClock) -> None:
        selector = _VirtualSelector()
        selector.clock = clock
        super().__init__(selector)
        self._virtual = clock
        self._clock_resolution = 0.0005

    def time(self) -> float:
        return self._virtual.elapsed_ms / 1000.0


def run_virtual(clock: VirtualClock, coro: Any) -> Any:
    loop = VirtualLoop(clock)
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()
