"""tools/list shows each descriptor's JSON Schema as it is (issue 18 item 5):
an object is open to unknown keys only where its schema says so, as in the
Node adapter (bindings-node/test/adapters/mcp.test.mjs)."""

from __future__ import annotations

from typing import Any

from mcp import Client
from pydantic import BaseModel, ConfigDict

from orpc_agent import capability, create_capability_registry
from orpc_agent.mcp import create_mcp_server


class Plain(BaseModel):
    a: str


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: str


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: str


class Out(BaseModel):
    got: str


DECLARED = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}
META: dict[str, Any] = {"expose": {"mcp": True}, "side_effect": "read", "risk": "low"}


@capability(id="plain", description="Plain model.", **META)
def plain(q: Plain) -> Out:
    return Out(got=",".join(sorted(q.model_dump())))


@capability(id="strict", description="extra=forbid.", **META)
def strict(q: Strict) -> Out:
    return Out(got=",".join(sorted(q.model_dump())))


@capability(id="loose", description="extra=allow.", **META)
def loose(q: Loose) -> Out:
    return Out(got=",".join(sorted(q.model_dump())))


@capability(id="declared", description="A declared JSON Schema.", input=DECLARED, **META)
def declared(q: dict[str, Any]) -> Out:
    return Out(got=",".join(sorted(q)))


async def test_input_and_output_schemas_are_the_descriptors_with_nothing_added() -> None:
    registry = create_capability_registry([plain, strict, loose, declared])
    async with Client(create_mcp_server(registry)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for d in registry.descriptors("mcp"):
        listed = tools[d["toolNames"]["mcp"]]
        assert listed.input_schema == d["inputSchema"], d["id"]
        assert listed.output_schema == d["outputSchema"], d["id"]
    assert "additionalProperties" not in tools["plain"].input_schema
    assert tools["strict"].input_schema["additionalProperties"] is False
    assert tools["loose"].input_schema["additionalProperties"] is True  # extra="allow" asks for it
    assert tools["declared"].input_schema == DECLARED


async def test_unknown_keys_meet_the_capabilitys_own_schema() -> None:
    registry = create_capability_registry([plain, strict, loose, declared])
    async with Client(create_mcp_server(registry)) as client:
        p = await client.call_tool("plain", {"a": "x", "extra": 1})
        s = await client.call_tool("strict", {"a": "x", "extra": 1})
        d = await client.call_tool("declared", {"a": "x", "extra": 1})
    assert p.is_error is False and p.structured_content == {"got": "a"}
    assert s.is_error and s.meta["orpc-agent/error"]["code"] == "INVALID_INPUT"  # type: ignore[index]
    assert d.is_error and d.meta["orpc-agent/error"]["code"] == "INVALID_INPUT"  # type: ignore[index]
