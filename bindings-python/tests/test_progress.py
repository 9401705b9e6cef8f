"""Progress from inside a handler: checked by the core, delivered to a direct
caller's ``on_progress`` scope and, through the MCP adapter, as
``notifications/progress`` to a real mcp ``Client`` that sent a token."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from pydantic import BaseModel

from orpc_agent import HandlerContext, ProgressEvent, capability, create_capability_registry, on_progress
from orpc_agent.mcp import create_mcp_server

# (done, total) reports and what the core answers: increasing, <= total, total fixed.
REPORTS: list[tuple[Any, Any]] = [
    (0, 3),
    (1, None),
    (1, None),  # not increasing
    (5, None),  # above the total
    (2, 4),  # total changed
    (2, 3),
    (-1, None),  # not a count
    (2.5, None),  # not a count
    (3, None),
]
ANSWERS = [True, True, False, False, False, True, False, False, True]
ACCEPTED = [ProgressEvent(0, 3), ProgressEvent(1, 3), ProgressEvent(2, 3), ProgressEvent(3, 3)]


class Empty(BaseModel):
    pass


@capability(id="work.async", description="Works.", expose={"direct": True, "mcp": True}, side_effect="none", risk="low")
async def work_async(_: Empty, ctx: HandlerContext) -> dict[str, Any]:
    answers = []
    for done, total in REPORTS:
        answers.append(ctx.progress(done, total))
        await asyncio.sleep(0)
    return {"answers": answers}


@capability(id="work.sync", description="Works in a thread.", expose={"direct": True, "mcp": True}, side_effect="none",
            risk="low")
def work_sync(_: Empty, ctx: HandlerContext) -> dict[str, Any]:
    answers = []
    for done, total in REPORTS:
        answers.append(ctx.progress(done, total))
        time.sleep(0.001)
    return {"answers": answers}


def registry() -> Any:
    return create_capability_registry([work_async, work_sync])


async def test_direct_invocation_delivers_accepted_reports_and_drops_the_rest() -> None:
    reg = registry()
    for cap in ("work.async", "work.sync"):
        events: list[ProgressEvent] = []
        with on_progress(events.append):
            out = await reg.invoke(cap, {})
        assert out.output == {"answers": ANSWERS}, cap
        assert events == ACCEPTED, cap


async def test_without_a_listener_the_handler_gets_the_same_answers() -> None:
    out = await registry().invoke("work.async", {})
    assert out.output == {"answers": ANSWERS}


async def test_a_failing_listener_changes_nothing() -> None:
    def boom(_: ProgressEvent) -> None:
        raise RuntimeError("listener bug")

    with on_progress(boom):
        out = await registry().invoke("work.async", {})
    assert out.output == {"answers": ANSWERS}


async def test_a_real_mcp_client_with_a_progress_token_receives_notifications() -> None:
    server = create_mcp_server(registry())
    for tool in ("work_async", "work_sync"):
        received: list[tuple[float, float | None]] = []

        async def on_notification(progress: float, total: float | None, message: str | None) -> None:
            received.append((progress, total))

        async with Client(server) as client:
            result = await client.call_tool(tool, {}, progress_callback=on_notification)
            assert result.is_error is False, tool
            assert result.structured_content == {"answers": ANSWERS}
            assert received == [(e.done, e.total) for e in ACCEPTED], tool
            # No token, no notifications.
            received.clear()
            await client.call_tool(tool, {})
            assert received == []


async def test_over_stdio_json_rpc_the_progress_token_gets_notifications() -> None:
    here = Path(__file__).resolve().parent
    params = StdioServerParameters(command=sys.executable, args=[str(here / "test_progress.py")], cwd=str(here))
    received: list[tuple[float, float | None]] = []

    async def on_notification(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total))

    async with Client(params) as client:
        result = await client.call_tool("work_sync", {}, progress_callback=on_notification)
        assert result.structured_content == {"answers": ANSWERS}
        assert received == [(e.done, e.total) for e in ACCEPTED]
        received.clear()
        await client.call_tool("work_async", {})
        assert received == []


if __name__ == "__main__":  # the stdio server of the test above
    create_mcp_server(registry(), "progress").run("stdio")
