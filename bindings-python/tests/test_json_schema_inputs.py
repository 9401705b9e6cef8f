"""Capabilities whose input (and output) is a JSON Schema dict rather than a
pydantic type (``orpc_agent.schema.JsonSchema``, validated with the
``jsonschema`` package): what the handler receives, what a caller gets for
an invalid value (INVALID_INPUT / OUTPUT_INVALID, the path of the first
issue leading the message), what descriptors and MCP tools describe, and
that the approval hash binds the value as sent."""

from __future__ import annotations

from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from mcp import Client
from pydantic import BaseModel

from orpc_agent import (
    ApprovalRequired,
    CapabilityError,
    Frame,
    InvalidInputError,
    OutputInvalidError,
    capability,
    create_capability_registry,
    define_capability,
    input_hash,
)
from orpc_agent.mcp import create_mcp_server
from orpc_agent.schema import JsonSchema, as_schema

ORDER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "minLength": 1},
        "qty": {"type": "integer", "minimum": 1, "default": 1},
        "lines": {
            "type": "array",
            "items": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        },
    },
    "required": ["sku"],
    "additionalProperties": False,
}
TOTAL: dict[str, Any] = {
    "type": "object",
    "properties": {"total": {"type": "number"}},
    "required": ["total"],
}

seen: list[Any] = []


@capability(
    id="cart.add",
    description="Add to the cart.",
    expose={"direct": True, "mcp": True},
    side_effect="write",
    risk="low",
    input=ORDER,
    output=TOTAL,
)
async def add(order: Any) -> Any:
    seen.append(order)
    return {"total": 2.5 * order.get("qty", 1)}


@capability(
    id="cart.broken",
    description="Returns a bad total.",
    expose={"direct": True},
    side_effect="none",
    risk="low",
    input={"type": "object"},
    output=TOTAL,
)
def broken(order: Any) -> Any:  # a sync handler: the same validation on the executor path
    return {"total": "not a number"}


@capability(
    id="cart.checkout",
    description="Check out.",
    expose={"mcp": True},
    side_effect="external",
    risk="high",
    approval={"required": True},
    input=ORDER,
)
async def checkout(order: Any) -> dict[str, Any]:
    seen.append(order)
    return {"charged": order["sku"]}


@pytest.fixture(autouse=True)
def _clear_seen() -> None:
    seen.clear()


def registry() -> Any:
    return create_capability_registry([add, broken, checkout])


class Order(BaseModel):
    sku: int  # not what ORDER says: the `input=` dict must win


def test_a_dict_is_a_json_schema_and_overrides_the_annotation() -> None:
    def handler(order: Order) -> None:
        return None

    spec = define_capability(
        handler, id="x.y", description="D.", expose={"direct": True}, side_effect="none", risk="low", input=ORDER
    )
    assert isinstance(spec.input, JsonSchema) and spec.input.json_schema() == ORDER
    assert spec.output is None  # `-> None`: no output schema
    assert spec.declaration()["inputSchema"] == ORDER and spec.declaration()["validateInput"] is True
    assert isinstance(as_schema(TOTAL), JsonSchema)


def test_an_invalid_json_schema_is_refused_when_declared() -> None:
    with pytest.raises(jsonschema.SchemaError):
        define_capability(
            add,
            id="x.z",
            description="D.",
            expose={"direct": True},
            side_effect="none",
            risk="low",
            input={"type": "object", "properties": {"sku": {"type": "text"}}},
        )


async def test_a_valid_input_reaches_the_handler_as_sent() -> None:
    out = await registry().invoke("cart.add", {"sku": "A-1", "qty": 3, "lines": [{"n": 1}, {"n": 2}]})
    assert out.output == {"total": 7.5}
    assert seen == [{"sku": "A-1", "qty": 3, "lines": [{"n": 1}, {"n": 2}]}]


async def test_a_json_schema_default_is_not_filled_in() -> None:
    # jsonschema validates, it does not fill defaults: `"default": 1` on
    # `qty` is descriptive (descriptors, MCP); the handler sees the input
    # as sent. (A pydantic model's defaults, by contrast, are applied.)
    out = await registry().invoke("cart.add", {"sku": "A-1"})
    assert seen == [{"sku": "A-1"}]
    assert out.output == {"total": 2.5}


@pytest.mark.parametrize(
    "value, where, rejected",
    [
        ({"sku": 7}, "/sku: does not satisfy 'type': \"string\"", None),
        ({"sku": ""}, "/sku: does not satisfy 'minLength'", None),
        ({"sku": "A-1", "qty": 0}, "/qty: does not satisfy 'minimum': 1", None),
        ({"sku": "A-1", "lines": [{"n": 1}, {"n": "two"}]}, "/lines/1/n: does not satisfy 'type': \"integer\"", "two"),
        ({"sku": "A-1", "lines": [{}]}, "/lines/0: does not satisfy 'required': [\"n\"]", None),
        ({}, "/: does not satisfy 'required': [\"sku\"]", None),
        ({"sku": "A-1", "extra": "4111111111111111"}, "/: does not satisfy 'additionalProperties': false", "4111"),
        (["sku"], "/: does not satisfy 'type': \"object\"", None),
    ],
)
async def test_an_invalid_input_is_invalid_input_with_the_path_of_the_issue(
    value: Any, where: str, rejected: str | None
) -> None:
    with pytest.raises(InvalidInputError) as err:
        await registry().invoke("cart.add", value)
    e = err.value
    assert (e.code, e.kind, e.retryable) == ("INVALID_INPUT", "std:invalid-args", False)
    # The core's words: where (a JSON pointer) and what the schema asks —
    # never the rejected value (jsonschema's own messages quote it).
    assert e.message.startswith("The input is invalid: " + where), e.message
    if rejected is not None:
        assert rejected not in e.message, e.message
    assert seen == []  # stage 4 refused it: the handler never ran


async def test_the_output_schema_is_checked() -> None:
    reg = registry()
    with pytest.raises(OutputInvalidError) as err:
        await reg.invoke("cart.broken", {})
    assert err.value.code == "OUTPUT_INVALID"
    # The invalid value itself never reaches the caller.
    assert "not a number" not in str(err.value.to_dict())


def test_descriptors_carry_both_schemas_verbatim() -> None:
    (d,) = [d for d in registry().descriptors("direct") if d["id"] == "cart.add"]
    assert d["inputSchema"] == ORDER
    assert d["outputSchema"] == TOTAL


async def test_the_approval_binds_the_input_as_sent_and_resume_runs_it() -> None:
    reg = registry()
    value = {"sku": "A-1", "qty": 2.0}  # 2.0 validates as an integer and hashes as 2
    frame = Frame("mcp", actor={"id": "agent-1"})
    pending = await reg.invoke("cart.checkout", value, frame)
    assert isinstance(pending, ApprovalRequired)
    r = pending.request
    assert r.input == value
    assert input_hash("cart.checkout", r.input) == input_hash("cart.checkout", {"sku": "A-1", "qty": 2})
    assert "inputHash" not in r.raw  # the store's own, never shown (issue 15)
    assert seen == []
    reg.approvals.approve(r.id, approver="ana")
    done = await reg.resume(r.id, frame)
    assert done.output == {"charged": "A-1"}
    assert seen == [value]
    # An invalid input never becomes a request.
    with pytest.raises(CapabilityError) as err:
        await reg.invoke("cart.checkout", {"sku": 1}, frame)
    assert err.value.code == "INVALID_INPUT"
    assert reg.approvals.list() == [reg.approvals.get(r.id)]


async def test_over_mcp_the_tool_has_the_schemas_and_refuses_invalid_arguments() -> None:
    async with Client(create_mcp_server(registry())) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["cart_add"].input_schema == ORDER
        assert tools["cart_add"].output_schema == TOTAL
        ok = await client.call_tool("cart_add", {"sku": "A-1", "qty": 2})
        assert ok.is_error is False and ok.structured_content == {"total": 5.0}
        bad = await client.call_tool("cart_add", {"sku": "A-1", "lines": [{"n": "x"}]})
        assert bad.is_error is True
        assert bad.meta is not None and bad.meta["orpc-agent/error"]["code"] == "INVALID_INPUT"
        assert bad.content[0].text.startswith("INVALID_INPUT: The input is invalid: /lines/0/n: ")  # type: ignore[union-attr]
    assert seen == [{"sku": "A-1", "qty": 2}]
