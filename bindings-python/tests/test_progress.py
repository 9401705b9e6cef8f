"""Progress from inside a handler: checked by the core, delivered to a direct
caller's ``on_progress`` scope and, through the MCP adapter, as
``notifications/progress`` to a real mcp ``Client`` that sent a token — and
to one that sent none, nothing: a ``message_handler`` records every
progress notification the client session receives, so that check can fail."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import mcp.types as mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import Context, MCPServer
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


@capability(
    id="work.sync",
    description="Works in a thread.",
    expose={"direct": True, "mcp": True},
    side_effect="none",
    risk="low",
)
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


class ProgressRecorder:
    """A client ``message_handler``: every ``notifications/progress`` the
    client session receives, as ``(token, progress, total)``, whether or not
    a progress callback is registered for its token. Over JSON-RPC the
    dispatcher tees tokened progress to this handler after routing it to the
    call's callback; on the in-process direct dispatcher (``mode="auto"``)
    tokened progress goes to the callback only, and a notification the
    server sends by other means still reaches this handler (see the control
    test below)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str | int, float, float | None]] = []

    async def __call__(self, message: Any) -> None:
        if isinstance(message, mcp_types.ProgressNotification):
            p = message.params
            self.seen.append((p.progress_token, p.progress, p.total))


def one_call_of_progress(seen: list[tuple[str | int, float, float | None]]) -> None:
    """``seen`` is exactly the accepted reports of one call, under one token."""
    assert [(done, total) for _, done, total in seen] == [(e.done, e.total) for e in ACCEPTED], seen
    assert len({token for token, _, _ in seen}) == 1, seen


probe = MCPServer("probe")


@probe.tool()
async def stray_progress(ctx: Context[Any, Any]) -> str:
    """Sends a notifications/progress the client never asked for."""
    await ctx.request_context.session.send_progress_notification("never-asked", 1, 2, related_request_id=ctx.request_id)
    return "sent"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_recorder_sees_progress_the_client_did_not_ask_for(mode: str) -> None:
    # The control for the "no token, no notifications" checks below: the
    # recorder is not blind in either in-process mode.
    recorder = ProgressRecorder()
    async with Client(probe, mode=mode, message_handler=recorder) as client:
        result = await client.call_tool("stray_progress", {})
        assert result.is_error is False
    assert recorder.seen == [("never-asked", 1.0, 2.0)]


# "auto": the in-process direct dispatcher (no JSON-RPC framing); "legacy":
# JSON-RPC messages over in-memory streams, as over a real transport.
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_real_mcp_client_with_a_progress_token_receives_notifications(mode: str) -> None:
    server = create_mcp_server(registry())
    for tool in ("work_async", "work_sync"):
        received: list[tuple[float, float | None]] = []

        # Called only within this iteration (the call below awaits it), so
        # the loop variable is the one meant.
        async def on_notification(progress: float, total: float | None, message: str | None) -> None:
            received.append((progress, total))  # noqa: B023

        recorder = ProgressRecorder()
        async with Client(server, mode=mode, message_handler=recorder) as client:
            result = await client.call_tool(tool, {}, progress_callback=on_notification)
            assert result.is_error is False, tool
            assert result.structured_content == {"answers": ANSWERS}
            assert received == [(e.done, e.total) for e in ACCEPTED], tool
            if mode == "legacy":
                one_call_of_progress(recorder.seen)  # the recorder sees what the callback got
            else:
                assert recorder.seen == [], tool  # direct dispatch: the callback only
            # No token, no notifications: nothing reaches the session at all.
            recorder.seen.clear()
            received.clear()
            result = await client.call_tool(tool, {})
            assert result.structured_content == {"answers": ANSWERS}, tool
            # A call with a token after it: its notifications come after any
            # the tokenless call could have caused, so by the time they are
            # here a stray one would be too.
            await client.call_tool(tool, {}, progress_callback=on_notification)
            assert received == [(e.done, e.total) for e in ACCEPTED], tool
            if mode == "legacy":
                one_call_of_progress(recorder.seen)
            else:
                assert recorder.seen == [], tool


async def test_over_stdio_json_rpc_the_progress_token_gets_notifications() -> None:
    here = Path(__file__).resolve().parent
    params = StdioServerParameters(command=sys.executable, args=[str(here / "test_progress.py")], cwd=str(here))
    received: list[tuple[float, float | None]] = []

    async def on_notification(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total))

    recorder = ProgressRecorder()
    async with Client(params, message_handler=recorder) as client:
        result = await client.call_tool("work_sync", {}, progress_callback=on_notification)
        assert result.structured_content == {"answers": ANSWERS}
        assert received == [(e.done, e.total) for e in ACCEPTED]
        one_call_of_progress(recorder.seen)  # every notification on the wire is recorded
        first = list(recorder.seen)
        # No token, no notifications on the wire; then a tokened call whose
        # notifications follow any the tokenless one could have sent.
        recorder.seen.clear()
        received.clear()
        result = await client.call_tool("work_async", {})
        assert result.structured_content == {"answers": ANSWERS}
        await client.call_tool("work_async", {}, progress_callback=on_notification)
        assert received == [(e.done, e.total) for e in ACCEPTED]
        one_call_of_progress(recorder.seen)
        assert recorder.seen[0][0] != first[0][0]  # each call has its own token


if __name__ == "__main__":  # the stdio server of the test above
    create_mcp_server(registry(), "progress").run("stdio")
