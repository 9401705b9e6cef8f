"""Two anonymous MCP clients over Streamable HTTP, served by uvicorn on a
port of its own, are two callers to the core: each session's call makes its
own approval request, and neither can run the other's by calling again
(the adapter takes the transport's session id when the frame names none, as
the Node adapter takes the SDK's ``extra.sessionId``).

Sessions are the 2025-11-25 protocol's (``mode="legacy"``, what Node's SDK
and today's desktop clients speak); the 2026-07-28 protocol has none, so
there only the frame factory's actor tells callers apart."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_caps import build
from orpc_agent.mcp import APPROVAL_META, create_mcp_server


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """``app`` on 127.0.0.1 at a port the OS picks; its URL until the block ends."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        # Waits on the server's own flag (the test's timeout bounds it).
        while not server.started:
            if task.done():
                task.result()  # the server failed to start: raise its error
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await task
        sock.close()


def request_id(result: Any) -> str:
    return result.meta[APPROVAL_META]["requestId"]  # type: ignore[no-any-return]


async def test_anonymous_clients_on_two_sessions_are_two_callers() -> None:
    records: list[dict[str, Any]] = []
    registry = build(records.append)
    async with served(create_mcp_server(registry).streamable_http_app()) as url:
        async with Client(url, mode="legacy") as ann, Client(url, mode="legacy") as bob:
            first = await ann.call_tool("docs_publish", {"q": "hi"})
            again = await ann.call_tool("docs_publish", {"q": "hi"})
            other = await bob.call_tool("docs_publish", {"q": "hi"})
            assert request_id(again) == request_id(first), "the same session's repeat finds its request"
            assert request_id(other) != request_id(first), "another session's identical call is its own"
            registry.approvals.approve(request_id(first), approver="editor-eve")
            # Bob calling again finds his own (pending) request, never Ann's
            # approved one; Ann's call runs hers.
            bobs = await bob.call_tool("docs_publish", {"q": "hi"})
            assert request_id(bobs) == request_id(other)
            anns = await ann.call_tool("docs_publish", {"q": "hi"})
            assert anns.is_error is False, anns
    sessions = {r["sessionId"] for r in records if r["event"] == "finished"}
    assert len(sessions) == 2 and None not in sessions, sessions


async def test_a_stateless_server_takes_no_session_from_the_client() -> None:
    # A stateless server issues no session and checks no header: a session
    # id the client sends is its own word, not a session.
    records: list[dict[str, Any]] = []
    registry = build(records.append)
    app = create_mcp_server(registry).streamable_http_app(stateless_http=True)
    async with served(app) as url:
        async with httpx2.AsyncClient(headers={"mcp-session-id": "forged-1"}) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                result = await client.call_tool("docs_publish", {"q": "hi"})
                assert request_id(result)
    finished = [r for r in records if r["event"] == "finished"]
    assert finished and all(r["sessionId"] is None for r in finished), finished
