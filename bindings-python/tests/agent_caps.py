"""Capabilities the agent-framework adapter tests serve (OpenAI Agents SDK,
PydanticAI): a read whose output is redacted, a destructive call a policy
refuses, a write that needs approval. ``CALLS`` counts handler runs."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel

from orpc_agent import CapabilityRegistry, Deny, capability, create_capability_registry, host_policy

CALLS: Counter[str] = Counter()

EMAIL = "ana@example.com"
CARD = "4111111111111111"


class Lookup(BaseModel):
    email: str


class Order(BaseModel):
    id: str
    email: str
    card: str


class Refund(BaseModel):
    order: str
    cents: int


def _mask(order: Order) -> Order:
    return Order(id=order.id, email="a***@example.com", card="****" + order.card[-4:])


@capability(
    id="orders.get",
    description="Find the customer's order by email.",
    expose={"aiSdk": True},
    side_effect="read",
    risk="low",
    redact_output=_mask,
)
async def get_order(q: Lookup) -> Order:
    CALLS["orders.get"] += 1
    return Order(id="o-1", email=q.email, card=CARD)


@capability(
    id="orders.purge",
    description="Delete every order.",
    expose={"aiSdk": True},
    side_effect="destructive",
    risk="critical",
    policies=[host_policy(lambda r: Deny("Purging is disabled; archive instead."), name="no-purge")],
)
async def purge(q: Lookup) -> None:
    CALLS["orders.purge"] += 1


@capability(
    id="orders.refund",
    description="Refund an order.",
    expose={"aiSdk": True, "direct": True},
    side_effect="write",
    risk="high",
    approval={"required": True, "type": "refund"},
)
async def refund(r: Refund) -> dict[str, Any]:
    CALLS["orders.refund"] += 1
    return {"refunded": r.order, "cents": r.cents}


@capability(
    id="orders.internal", description="Not for models.", expose={"direct": True}, side_effect="read", risk="low"
)
async def internal(q: Lookup) -> str:
    return "direct only"


def build(audit: Any = None, approval_store: Any = "memory", **options: Any) -> CapabilityRegistry:
    return create_capability_registry(
        [get_order, purge, refund, internal], audit=audit, audit_payloads=True, approval_store=approval_store, **options
    )


def finished(audit: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """(capability, outcome, resumed) of each finished record, in order."""
    return [(r["capabilityId"], r["outcome"], r["resumed"]) for r in audit if r["event"] == "finished"]
