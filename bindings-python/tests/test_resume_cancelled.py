"""A resume by a task already asked to cancel (one that caught its
``CancelledError`` and went on) consumes nothing: the core ends the call
CANCELLED before its consume step, and a later resume runs the approved
call once. The same rule as Node's aborted signal and Swift's cancelled
task (docs/decisions.md, "Cancellation")."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from orpc_agent import ApprovalRequired, CapabilityError, Frame, capability, create_capability_registry

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="Task.cancelling() is Python 3.11+")


def pay_registry(runs: list[Any]) -> Any:
    """``pay.send`` (approval required, on MCP); ``runs`` records its calls."""

    @capability(
        id="pay.send",
        description="Pay.",
        expose={"mcp": True},
        side_effect="external",
        risk="high",
        approval={"required": True},
    )
    async def pay(x: dict[str, Any]) -> dict[str, Any]:
        runs.append(x)
        return x

    return create_capability_registry([pay])


async def after_a_swallowed_cancel(call: Any) -> str:
    """``call()`` in a task asked to cancel that caught its ``CancelledError``
    and went on: the error code it ended with, or ``"ok"``."""

    async def run() -> str:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            pass  # caught, and the task goes on: it is still asked to cancel
        try:
            await call()
        except CapabilityError as e:
            return e.code
        return "ok"

    return await asyncio.create_task(run())


async def test_a_resume_by_a_task_asked_to_cancel_consumes_nothing() -> None:
    runs: list[Any] = []
    reg = pay_registry(runs)
    out = await reg.invoke("pay.send", {"amount": 3}, Frame("mcp", actor={"id": "ana"}))
    assert isinstance(out, ApprovalRequired)
    reg.approvals.approve(out.request.id, approver="boss")

    assert await after_a_swallowed_cancel(lambda: reg.resume(out.request.id)) == "CANCELLED"
    assert runs == []
    assert reg.approvals.get(out.request.id).status == "approved"  # type: ignore[union-attr]
    done = await reg.resume(out.request.id)
    assert done.output == {"amount": 3}  # type: ignore[union-attr]
    assert runs == [{"amount": 3}]


async def test_a_repeated_mcp_call_by_a_task_asked_to_cancel_consumes_nothing_and_stores_nothing() -> None:
    runs: list[Any] = []
    reg = pay_registry(runs)
    frame = Frame("mcp", actor={"id": "ana"})
    out = await reg.invoke("pay.send", {"amount": 3}, frame)
    assert isinstance(out, ApprovalRequired)
    reg.approvals.approve(out.request.id, approver="boss")

    assert await after_a_swallowed_cancel(lambda: reg.invoke("pay.send", {"amount": 3}, frame)) == "CANCELLED"
    assert await after_a_swallowed_cancel(lambda: reg.invoke("pay.send", {"amount": 4}, frame)) == "CANCELLED"
    assert runs == []
    assert reg.approvals.get(out.request.id).status == "approved"  # type: ignore[union-attr]
    assert len(reg.approvals.list()) == 1, "no request stored for the cancelled caller"
    done = await reg.invoke("pay.send", {"amount": 3}, frame)
    assert done.output == {"amount": 3}  # type: ignore[union-attr]
    assert runs == [{"amount": 3}]


def test_an_approval_gated_call_stepped_without_an_asyncio_loop_still_answers() -> None:
    """A host that steps the call itself (anyio on trio, a test) has no
    asyncio task to ask whether it was cancelled: not cancelled."""
    reg = pay_registry([])
    call = reg.invoke("pay.send", {"amount": 3}, Frame("mcp", actor={"id": "ana"})).__await__()
    with pytest.raises(StopIteration) as done:
        call.send(None)
    assert isinstance(done.value.value, ApprovalRequired)
