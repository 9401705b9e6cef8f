"""A small typed use of the public API; `mypy --strict` must accept it
(make test-python runs it). Not collected by pytest (no test_ prefix)."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from orpc_agent import (
    ApprovalRequest,
    ApprovalRequired,
    CapabilityError,
    CapabilityRegistry,
    Deny,
    Frame,
    InvokeOk,
    NotFoundError,
    PolicyRequest,
    RedactionInfo,
    capability,
    create_capability_registry,
    host_policy,
)


class Query(BaseModel):
    email: str


class Orders(BaseModel):
    ids: list[str]


def mask(output: Orders, info: RedactionInfo) -> Orders:
    return Orders(ids=["***" for _ in output.ids]) if info.surface == "mcp" else output


def owner_only(request: PolicyRequest) -> Deny | None:
    return None if request.frame.actor_id else Deny("Sign in first.")


def shown_to(info: RedactionInfo) -> str | None:
    actor_id = info.actor.get("id")
    return actor_id if isinstance(actor_id, str) else None


def hide_all(output: Orders) -> Orders:  # a one-parameter redactor
    return Orders(ids=[])


def no_order(order_id: str) -> NotFoundError:
    return NotFoundError(f"No order {order_id}; list orders first.", retryable=False)


@capability(
    id="orders.search",
    description="Search orders by customer email.",
    expose={"direct": True, "mcp": True},
    side_effect="read",
    risk="low",
    redact_output=mask,
    policies=[host_policy(owner_only, name="owner-only")],
)
async def search(q: Query) -> Orders:
    return Orders(ids=[q.email])


async def main() -> list[str]:
    registry: CapabilityRegistry = create_capability_registry([search], approval_store="memory")
    frame = Frame("direct", actor={"id": "ana"})
    outcome = await registry.invoke("orders.search", {"email": "a@b.c"}, frame)
    if isinstance(outcome, ApprovalRequired):
        request: ApprovalRequest = outcome.request
        return [request.id]
    ok: InvokeOk[object] = outcome
    try:
        await registry.invoke("orders.search", {"email": 1}, frame)
    except CapabilityError as e:
        print(e.code, e.kind, e.retryable)
    pending: list[ApprovalRequest] = registry.approvals.list(status="pending")
    print(ok.output, pending, registry.inspect()["valid"], len(registry.descriptors("mcp")))
    return []


if __name__ == "__main__":
    asyncio.run(main())
