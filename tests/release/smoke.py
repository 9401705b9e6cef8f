"""The release smoke test of the `orpc-agent` wheel (scripts/test-release.sh),
run in a fresh virtual environment outside the repository: a governed call,
an approval round trip on SQLite, and an MCP tools/list through the `mcp`
package's own client. Prints one line per check."""

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from orpc_agent import ApprovalConsumedError, ApprovalRequired, Frame, capability, create_capability_registry


class Query(BaseModel):
    email: str


class Refund(BaseModel):
    id: str
    amount: float


paid: list[Refund] = []


@capability(id="orders.search", description="Search orders.", expose={"mcp": True, "direct": True}, side_effect="read", risk="low")
async def search(q: Query) -> list[dict[str, Any]]:
    return [{"id": "o-1", "email": q.email}]


@capability(
    id="orders.refund",
    description="Refund an order.",
    expose={"mcp": True, "direct": True},
    side_effect="external",
    risk="high",
    approval={"required": True},
)
async def refund(r: Refund) -> dict[str, float]:
    paid.append(r)
    return {"refunded": r.amount}


async def main() -> None:
    db = Path(tempfile.mkdtemp(prefix="orpc-agent-release-")) / "approvals.db"
    registry = create_capability_registry([search, refund], approval_store={"sqlite": str(db)})
    frame = Frame("direct", actor={"id": "u1"})

    found = await registry.invoke("orders.search", {"email": "ana@example.com"}, frame)
    assert found.output == [{"id": "o-1", "email": "ana@example.com"}]  # type: ignore[union-attr]
    print("governed call: ok")

    gated = await registry.invoke("orders.refund", {"id": "o-1", "amount": 12.5}, frame)
    assert isinstance(gated, ApprovalRequired) and not paid
    registry.approvals.approve(gated.request.id, approver="lead")
    assert (await registry.resume(gated.request.id)).output == {"refunded": 12.5}  # type: ignore[union-attr]
    try:
        await registry.resume(gated.request.id)
        raise AssertionError("a replay ran")
    except ApprovalConsumedError:
        pass
    assert len(paid) == 1
    print("approval round trip on SQLite: ok")

    if "--no-mcp" not in sys.argv:
        from mcp import Client

        from orpc_agent.mcp import create_mcp_server

        async with Client(create_mcp_server(registry)) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
        assert names == ["orders_refund", "orders_search"], names
        print(f"MCP tools/list: {', '.join(names)}")


asyncio.run(main())
