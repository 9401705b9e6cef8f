"""Cedar policies in Python (issue 21): what a policy reads is the validated
input as the binding exports it to the core, so a pydantic model with
aliases is type-checked, and read, by its field names, not by the aliases
callers send."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from orpc_agent import CapabilityError, Frame, RegistryValidationError, capability, create_capability_registry


class Order(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    order_id: str = Field(alias="orderId")
    cents: int
    note: str | None = None


def _registry(policy: str) -> object:
    @capability(
        id="orders.refund",
        description="Refund an order.",
        expose={"mcp": True},
        side_effect="write",
        risk="high",
        policies=[{"name": "refunds", "cedar": policy}],
    )
    async def refund(o: Order) -> dict[str, object]:
        return {"refunded": o.order_id, "cents": o.cents}

    return create_capability_registry([refund])


async def test_a_policy_reads_the_validated_input_by_field_name() -> None:
    reg = _registry(
        '@reason("Order o-9 is frozen.") forbid (principal, action, resource) '
        'when { context.input.order_id == "o-9" && context.input.cents > 100 };'
    )
    with pytest.raises(CapabilityError) as denied:
        await reg.invoke("orders.refund", {"orderId": "o-9", "cents": 500}, Frame("mcp"))  # type: ignore[attr-defined]
    assert denied.value.code == "POLICY_DENIED"
    ok = await reg.invoke("orders.refund", {"orderId": "o-1", "cents": 500}, Frame("mcp"))  # type: ignore[attr-defined]
    assert ok.status == "ok"


def test_the_alias_callers_send_is_not_what_a_policy_reads() -> None:
    with pytest.raises(RegistryValidationError) as e:
        _registry('forbid (principal, action, resource) when { context.input.orderId == "o-9" };')
    assert any(p["code"] == "INVALID_POLICY" for p in e.value.problems)


def test_an_optional_field_is_read_behind_has() -> None:
    with pytest.raises(RegistryValidationError):
        _registry('forbid (principal, action, resource) when { context.input.note == "x" };')
    _registry('forbid (principal, action, resource) when { context.input has note && context.input.note == "x" };')
