"""A capability behind approval on a SQLite store, shared by two processes
in test_runtime.py."""

from __future__ import annotations

from pydantic import BaseModel

from orpc_agent import CapabilityRegistry, capability, create_capability_registry


class Ship(BaseModel):
    order_id: str


@capability(
    id="ship.order",
    description="Ship an order.",
    expose={"mcp": True},
    side_effect="external",
    risk="high",
    approval={"required": True},
)
async def ship(s: Ship) -> dict[str, str]:
    return {"shipped": s.order_id}


def build(db: str) -> CapabilityRegistry:
    return create_capability_registry([ship], approval_store={"sqlite": db})
