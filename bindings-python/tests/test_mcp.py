"""The MCP adapter with the real mcp 2.x SDK: in-memory Client and stdio."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp_caps import build

from orpc_agent import Frame
from orpc_agent.mcp import APPROVAL_META, ERROR_META, create_mcp_server

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def test_tools_list_comes_from_descriptors_with_annotations() -> None:
    async with Client(create_mcp_server(build())) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"docs_search", "docs_publish", "purge", "docs_ext"}  # docs.secret is not on mcp
    s = tools["docs_search"].annotations
    assert (s.read_only_hint, s.destructive_hint, s.idempotent_hint, s.open_world_hint) == (True, False, True, False)
    p = tools["purge"].annotations
    assert (p.read_only_hint, p.destructive_hint, p.title) == (False, True, "Purge")
    e = tools["docs_ext"].annotations
    assert (e.open_world_hint, e.idempotent_hint) == (True, True)
    assert tools["docs_search"].input_schema["required"] == ["q"]
    assert tools["docs_search"].output_schema["properties"]["hits"]["type"] == "array"
    assert tools["docs_ext"].output_schema is None  # a list is not an MCP structured output


async def test_call_runs_the_pipeline_on_the_mcp_surface_with_trace_meta() -> None:
    audit: list[dict[str, Any]] = []
    server = create_mcp_server(build(audit.append), frame=lambda ctx: Frame("direct", actor={"id": "ana"}))
    async with Client(server) as client:
        r = await client.call_tool("docs_search", {"q": "abc"}, meta={"traceparent": TRACEPARENT})
    assert r.is_error is False
    assert r.structured_content == {"hits": ["ABC"], "trace": TRACEPARENT}
    last = audit[-1]
    # The adapter fixes the surface (SI-2) even if the host's frame says otherwise.
    assert (last["surface"], last["actorId"], last["traceparent"]) == ("mcp", "ana", TRACEPARENT)


async def test_errors_and_approvals_become_actionable_results() -> None:
    async with Client(create_mcp_server(build())) as client:
        bad = await client.call_tool("docs_search", {"q": 3})
        denied = await client.call_tool("purge", {"q": "x"})
        pending = await client.call_tool("docs_publish", {"q": "x"})
        hidden = await client.call_tool("docs_secret", {"q": "x"})
    assert bad.is_error and bad.meta[ERROR_META]["code"] == "INVALID_INPUT"  # type: ignore[index]
    assert "q:" in bad.content[0].text  # type: ignore[union-attr]
    assert denied.is_error and denied.meta[ERROR_META]["code"] == "POLICY_DENIED"  # type: ignore[index]
    assert "archive instead" in denied.content[0].text  # type: ignore[union-attr]
    assert pending.is_error and pending.meta[APPROVAL_META]["status"] == "pending"  # type: ignore[index]
    assert pending.meta[APPROVAL_META]["type"] == "editor"  # type: ignore[index]
    assert hidden.is_error  # unknown to this server: the SDK's own error


async def test_approval_round_trip_through_mcp() -> None:
    registry = build()
    async with Client(create_mcp_server(registry)) as client:
        pending = await client.call_tool("docs_publish", {"q": "hello"})
        request_id = pending.meta[APPROVAL_META]["id"]  # type: ignore[index]
        registry.approvals.approve(request_id, approver="editor-eve")
        done = await registry.resume(request_id)
    assert done.output == {"published": "hello"}  # type: ignore[union-attr]


async def test_over_stdio() -> None:
    here = Path(__file__).resolve().parent
    params = StdioServerParameters(command=sys.executable, args=[str(here / "mcp_caps.py")], cwd=str(here))
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        r = await client.call_tool("docs_search", {"q": "io"}, meta={"traceparent": TRACEPARENT})
        denied = await client.call_tool("purge", {"q": "x"})
    assert "docs_search" in names
    assert r.structured_content == {"hits": ["IO"], "trace": TRACEPARENT}
    assert denied.is_error
