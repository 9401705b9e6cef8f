"""Capabilities served by the MCP tests (in memory and over stdio)."""

from __future__ import annotations

import sys
from typing import Any

from pydantic import BaseModel

from orpc_agent import CapabilityRegistry, Deny, Frame, capability, create_capability_registry, host_policy


class Query(BaseModel):
    q: str


class Hits(BaseModel):
    hits: list[str]
    trace: str | None = None


@capability(id="docs.search", description="Search docs.", expose={"mcp": True}, side_effect="read", risk="low")
async def search(q: Query, ctx: Any) -> Hits:
    return Hits(hits=[q.q.upper()], trace=ctx.frame.traceparent)


@capability(
    id="docs.publish",
    description="Publish a doc.",
    expose={"mcp": True},
    side_effect="write",
    risk="high",
    approval={"required": True, "type": "editor"},
)
async def publish(q: Query) -> dict[str, str]:
    return {"published": q.q}


@capability(
    id="docs.purge",
    description="Purge all docs.",
    expose={"mcp": True},
    side_effect="destructive",
    risk="critical",
    policies=[host_policy(lambda r: Deny("Purging is disabled; archive instead."), name="no-purge")],
    adapters={"mcp": {"tool_name": "purge", "annotations": {"title": "Purge"}}},
)
async def purge(q: Query) -> None: ...


@capability(id="docs.secret", description="Only direct.", expose={"direct": True}, side_effect="read", risk="low")
async def secret(q: Query) -> str:
    return "s"


@capability(
    id="docs.ext",
    description="Call out.",
    expose={"mcp": True},
    side_effect="external",
    risk="medium",
    idempotent=True,
    policies=[lambda r: None],
)
async def ext(q: Query) -> list[str]:
    return [q.q]


def build(audit: Any = None) -> CapabilityRegistry:
    return create_capability_registry([search, publish, purge, secret, ext], audit=audit)


if __name__ == "__main__":
    from orpc_agent.mcp import create_mcp_server

    registry = build()
    create_mcp_server(registry, "docs", frame=lambda ctx: Frame("mcp", actor={"id": "stdio-user"})).run("stdio")
    sys.exit(0)
