"""A gated call held before its handler: how an agent adapter asks the
core's gate (policies, approval) in a framework's approval hook without
running the call there — Node's ``handler-hold.ts``. The Agents SDK asks
``needs_approval`` of a call and then invokes the tool, unless the run was
cancelled in between; a handler run in the hook would have done its work
for a call nobody reads, which the model may then make again.

The adapter starts the invocation with a hold (``invoke_to_handler``); the
driver, at the call's first ``RunHandler`` step, says the call passed the
gate (``reached``) and waits: ``release(True)`` when the framework invokes
the tool, ``release(False)`` when it will not (a later call under the same
id). The call's deadline ends the wait too: the core is asked the step
again with the time (``advance_at``), so a handler is never started past
its deadline and a call nobody invokes ends in TIMEOUT then, audited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from . import _native


class HandlerHold:
    """One call's hold: ``reached`` once it passed the gate; ``release``."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.reached: asyncio.Future[None] = loop.create_future()
        self._go: asyncio.Future[bool] = loop.create_future()

    def release(self, run: bool) -> None:
        """Runs the handler (``True``) or ends the call unrun (``False``); the first word counts."""
        if not self._go.done():
            self._go.set_result(run)

    async def step(self, inv: Any) -> int:
        """The driver's ``RunHandler`` step of a held call: waits for the
        adapter's word, then the core's next step. Run: the core is asked
        the step again with the time (it times out a call past its
        deadline). No: CANCELLED. At the deadline (by the registry's clock)
        the core is asked too, and only its answer ends the wait: a timer
        that fires before the core's clock says so waits on, so only
        ``release(True)`` starts the handler."""
        if not self.reached.done():
            self.reached.set_result(None)
        while True:
            done, _ = await asyncio.wait((self._go,), timeout=inv.remaining_s() + 0.001)
            if done and not self._go.result():
                return int(inv.answer(_native.ANSWER_CANCELLED))
            k = int(inv.advance_at())
            if done or k != _native.RUN_HANDLER:
                return k


async def invoke_to_handler(
    invoke: Callable[[HandlerHold], Awaitable[Any]],
) -> tuple[HandlerHold | None, asyncio.Task[Any]]:
    """Runs ``invoke(hold)`` up to its handler: the hold is returned once
    the call passed the gate (the adapter releases it when its framework
    invokes the call; the task is then its outcome); ``None`` when the
    call ended before its handler (approval required, refused), and the
    task is how. Cancelled while it waits, the call is cancelled too."""
    hold = HandlerHold()
    task = asyncio.ensure_future(invoke(hold))
    # Whatever it ends in is read by the adapter, or by nobody (a held call
    # never invoked): never "exception never retrieved".
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
    try:
        await asyncio.wait((task, hold.reached), return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    return (hold if not task.done() else None), task
