"""The same orders app as bindings-node/test/postgres/app.mjs, in Python, on
the same PostgreSQL store: capability ids, schemas and approval rules match,
so a request created by either binding is approved and resumed by either.

    python app.py create <actor> <order>   → prints the approval request
    python app.py approve <id> <approver>  → prints the decided request
    python app.py resume <id>              → prints the outcome or the error
    python app.py race <id> <n>            → n concurrent resumes; prints codes

The URL is ORPC_AGENT_TEST_PG_URL (scripts/pg-test-cluster.sh sets it); the
handler appends one line per run to $HANDLER_LOG.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from pydantic import BaseModel, Field

from orpc_agent import CapabilityError, CapabilityRegistry, capability, create_capability_registry

PG_URL = os.environ.get("ORPC_AGENT_TEST_PG_URL", "") + "?sslmode=disable"


class Refund(BaseModel):
    id: str
    amount: float = Field(gt=0)


class Lookup(BaseModel):
    id: str


@capability(
    id="orders.refund",
    description="Refund an order. Needs a human's approval.",
    expose={"direct": True, "mcp": True},
    side_effect="write",
    risk="high",
    approval={"required": True, "type": "human-confirmation"},
)
async def refund(input: Refund) -> dict[str, Any]:
    log = os.environ.get("HANDLER_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{os.getpid()} {input.id}\n")
    return {"refunded": input.id, "amount": input.amount, "by": os.getpid()}


@capability(id="orders.get", description="Read an order.", expose={"direct": True}, side_effect="read", risk="low")
async def get(input: Lookup) -> dict[str, Any]:
    return {"id": input.id, "status": "paid"}


def registry(url: str = PG_URL, **options: Any) -> CapabilityRegistry:
    store = options.pop("approval_store", {"postgres": {"url": url, "connect_timeout_ms": 5000}})
    return create_capability_registry([refund, get], approval_store=store, approver_must_differ=True, **options)


async def main(cmd: str, *args: str) -> int:
    reg = registry()

    def out(v: Any) -> None:
        print(json.dumps(v), flush=True)

    try:
        if cmd == "create":
            actor, order = args
            r = await reg.invoke(
                "orders.refund", {"id": order, "amount": 12.5}, {"surface": "mcp", "actor": {"id": actor}}
            )
            out(r.request.to_dict())  # type: ignore[union-attr]
        elif cmd == "approve":
            out((await reg.approvals.approve_async(args[0], approver=args[1])).to_dict())
        elif cmd == "resume":
            r = await reg.resume(args[0])
            out({"status": "ok", "output": r.output})  # type: ignore[union-attr]
        elif cmd == "race":
            results = await asyncio.gather(*(reg.resume(args[0]) for _ in range(int(args[1]))), return_exceptions=True)
            out(["OK" if not isinstance(r, BaseException) else getattr(r, "code", repr(r)) for r in results])
        else:
            raise SystemExit(f"unknown command {cmd}")
    except CapabilityError as e:
        out({"error": {"code": e.code, "message": e.message, "details": e.details}})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:])))
