"""The Python spelling of a declaration's own fields (``expires_in_ms``,
``tool_name``) is converted; the application's data inside a declaration —
surface names, actor attribute schemas, MCP annotations — reaches the core
as given, so a declaration means in Python what it means in Node."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from pydantic import BaseModel

from orpc_agent import CapabilityError, Frame, RegistryValidationError, capability, create_capability_registry
from orpc_agent.mcp import create_mcp_server


class Order(BaseModel):
    order_id: str


def _declare(**options: Any) -> Any:
    @capability(id="orders.get", description="Get an order.", side_effect="read", risk="low", **options)
    async def get(o: Order) -> dict[str, str]:
        return {"id": o.order_id}

    return get


def test_a_surface_is_named_as_the_core_names_it_never_respelled() -> None:
    for expose in ({"ai_sdk": True}, {"mcp_": True}, {"aiSdk": False, "ai_sdk": True}):
        with pytest.raises(RegistryValidationError) as e:
            create_capability_registry([_declare(expose=expose)])
        assert [p["code"] for p in e.value.problems] == ["UNKNOWN_SURFACE"], expose


async def test_actor_attribute_names_in_a_cedar_policy_stay_as_the_application_wrote_them() -> None:
    policy = {
        "name": "cost-centres",
        "cedar": 'forbid (principal, action, resource) when { principal.attributes.cost_center == "x" };',
        "actor_attributes": {
            "type": "object",
            "properties": {"cost_center": {"type": "string"}},
            "required": ["cost_center"],
        },
    }
    registry = create_capability_registry([_declare(expose={"mcp": True}, policies=[policy])])
    frame = Frame("mcp", actor={"id": "ana", "attributes": {"cost_center": "x"}})
    with pytest.raises(CapabilityError) as denied:
        await registry.invoke("orders.get", {"order_id": "o-1"}, frame)
    assert denied.value.code == "POLICY_DENIED"
    allowed = Frame("mcp", actor={"id": "ana", "attributes": {"cost_center": "y"}})
    assert (await registry.invoke("orders.get", {"order_id": "o-1"}, allowed)).output == {"id": "o-1"}


async def test_mcp_annotations_are_published_as_given_and_the_library_s_own_fields_are_converted() -> None:
    adapters = {
        "mcp": {
            "tool_name": "order_get",
            "annotations": {"title": "Order", "read_only_hint": True, "x_vendor": {"a_b": 1}},
        }
    }
    registry = create_capability_registry([_declare(expose={"mcp": True}, adapters=adapters)])
    async with Client(create_mcp_server(registry)) as client:
        (tool,) = (await client.list_tools()).tools
    assert tool.name == "order_get" and tool.annotations is not None and tool.annotations.title == "Order"
    # What tools/list publishes (the Python SDK's client drops keys MCP does not define).
    (descriptor,) = registry.descriptors(surface="mcp")
    assert descriptor["annotations"]["x_vendor"] == {"a_b": 1}
    assert descriptor["annotations"]["readOnlyHint"] is True and "read_only_hint" not in descriptor["annotations"]


def test_two_spellings_of_one_field_are_refused_not_one_silently_dropped() -> None:
    with pytest.raises(ValueError, match="tool_name"):
        _declare(expose={"mcp": True}, adapters={"mcp": {"toolName": "a", "tool_name": "b"}})
    with pytest.raises(ValueError, match="read_only_hint"):
        _declare(
            expose={"mcp": True}, adapters={"mcp": {"annotations": {"readOnlyHint": False, "read_only_hint": True}}}
        )
