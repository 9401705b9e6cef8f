"""End to end: start server.py over MCP stdio and drive it with a real `mcp`
client, printing each step; approve the refund from a second registry
opened on the same SQLite file (an approver's process), then call again.
`make demo` runs this."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def show(title: str, result) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(getattr(c, "text", "") for c in result.content)
    flag = "isError" if result.is_error else "ok"
    print(f"== {title}: [{flag}] {text}")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "approvals.db")
        params = StdioServerParameters(
            command=sys.executable,
            args=[str(HERE / "server.py")],
            env={**os.environ, "ORDERS_APPROVALS_DB": db},
        )
        async with Client(params) as client:
            tools = await client.list_tools()
            print("== tools/list")
            for t in tools.tools:
                a = t.annotations
                print(
                    f"   {t.name}: readOnly={a.read_only_hint} destructive={a.destructive_hint}"
                    f" idempotent={a.idempotent_hint}"
                )
            show("orders_get o-1 (card redacted)", await client.call_tool("orders_get", {"order_id": "o-1"}))
            show("orders_get bad input", await client.call_tool("orders_get", {"order_id": 7}))
            show("orders_delete (policy denies)", await client.call_tool("orders_delete", {"order_id": "o-1"}))
            first = await client.call_tool("orders_refund", {"order_id": "o-1", "amount": 5})
            show("orders_refund (approval requested)", first)
            request_id = (first.meta or {})["orpc-agent/approval"]["requestId"]

            # The approver's process: same SQLite store, no MCP involved.
            from server import build

            approver, _ = build(db)
            approved = approver.approvals.approve(request_id, approver="manager-mia", reason="ok")
            print(f"== approved {approved.id} by {approved.decided_by}")
            resumed = await approver.resume(request_id)
            print(f"== resumed in the approver's process: {resumed.output}")  # type: ignore[union-attr]
            try:
                await approver.resume(request_id)
            except Exception as e:  # single use (SI-7)
                print(f"== resumed again: {e}")
    print("demo-python: ok")


if __name__ == "__main__":
    asyncio.run(main())
