"""A small governed toolset served over MCP stdio (orpc_agent + mcp 2.x).

Four capabilities: a read, a write behind approval, a destructive one behind
a policy, and one whose output is redacted. Run it as an MCP server:

    python examples/python-agent/server.py

`client.py` next to it starts this server over stdio and drives it with a
real `mcp` client. Approvals live in a SQLite file so an approver process
(client.py plays one) can approve a request the server created.
"""

from __future__ import annotations

import os
import sys

from pydantic import BaseModel, Field

from orpc_agent import Abstain, Deny, PolicyRequest, capability, create_capability_registry, host_policy
from orpc_agent.mcp import create_mcp_server

ORDERS = {"o-1": {"id": "o-1", "customer": "ana@example.com", "total": 42.0, "card": "4111111111111111"}}


class Lookup(BaseModel):
    order_id: str = Field(description="The order id, e.g. o-1.")


class Order(BaseModel):
    id: str
    customer: str
    total: float
    card: str


class Refund(BaseModel):
    order_id: str
    amount: float = Field(gt=0)


@capability(
    id="orders.get",
    description="Fetch one order by id. Card numbers are masked.",
    expose={"mcp": True, "aiSdk": True, "direct": True},
    side_effect="read",
    risk="low",
    redact_output=lambda order, info: order.model_copy(update={"card": "**** " + order.card[-4:]}),
)
async def get_order(q: Lookup) -> Order:
    order = ORDERS.get(q.order_id)
    if order is None:
        from orpc_agent import CapabilityError

        raise CapabilityError("NOT_FOUND", f"No order {q.order_id}; list orders first.")
    return Order(**order)


@capability(
    id="orders.refund",
    description="Refund part of an order. Needs a manager's approval.",
    expose={"mcp": True, "aiSdk": True},
    side_effect="write",
    risk="high",
    approval={"required": True, "type": "manager"},
)
def refund(r: Refund) -> dict[str, object]:
    return {"refunded": r.amount, "order_id": r.order_id}


def only_admins(request: PolicyRequest) -> Deny | Abstain:
    roles = request.frame.actor.get("roles") or []
    return Abstain() if "admin" in roles else Deny("Only an admin may delete orders; ask an administrator.")


@capability(
    id="orders.delete",
    description="Delete an order permanently.",
    expose={"mcp": True, "aiSdk": True},
    side_effect="destructive",
    risk="critical",
    policies=[host_policy(only_admins, name="admins-only")],
)
async def delete(q: Lookup) -> dict[str, bool]:
    return {"deleted": ORDERS.pop(q.order_id, None) is not None}


def build(db: str):
    registry = create_capability_registry(
        [get_order, refund, delete],
        approval_store={"sqlite": db},
        audit=lambda r: (
            print(f"audit: {r['capabilityId']} -> {r['outcome']}", file=sys.stderr)
            if r["event"] == "finished"
            else None
        ),
    )
    return registry, create_mcp_server(registry, "orders")


if __name__ == "__main__":
    _, server = build(os.environ.get("ORDERS_APPROVALS_DB", "approvals.db"))
    server.run("stdio")
