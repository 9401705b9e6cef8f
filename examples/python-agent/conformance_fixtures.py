"""The tools the official MCP conformance suite's tool scenarios call
(@modelcontextprotocol/conformance: tools-call-simple-text, tools-call-error,
tools-call-with-progress, json-schema-2020-12), declared as governed
capabilities like server.py's, so each scenario goes through the MCP adapter
and the pipeline. http_server.py adds them when MCP_CONFORMANCE_FIXTURES=1
(`make test-mcp-conformance`); the same four are in
examples/node-orders/src/conformance-fixtures.mjs.
"""

from __future__ import annotations

import asyncio
from typing import Any

from orpc_agent import HandlerContext, capability

NO_ARGUMENTS: dict[str, Any] = {"type": "object"}
FIXTURE = {"expose": {"mcp": True}, "side_effect": "none", "risk": "low"}

# The scenario's schema: $schema 2020-12, $defs, additionalProperties: false
# (the same JSON Schema zod writes for the Node fixture).
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
    "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
}


@capability(
    id="test_simple_text", description="Returns a simple text (MCP conformance fixture).", input=NO_ARGUMENTS, **FIXTURE
)
def simple_text(_: dict[str, Any]) -> str:
    return "This is a simple text response for testing."


@capability(
    id="test_error_handling", description="Always fails (MCP conformance fixture).", input=NO_ARGUMENTS, **FIXTURE
)
def error_handling(_: dict[str, Any]) -> str:
    raise RuntimeError("This tool always fails.")


@capability(
    id="test_tool_with_progress",
    description="Reports progress 0, 50, 100 of 100 (MCP conformance fixture).",
    input=NO_ARGUMENTS,
    **FIXTURE,
)
async def with_progress(_: dict[str, Any], ctx: HandlerContext) -> str:
    ctx.progress(0, 100)
    await asyncio.sleep(0.05)
    ctx.progress(50, 100)
    await asyncio.sleep(0.05)
    ctx.progress(100, 100)
    return "Progress reported."


@capability(
    id="json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features (MCP conformance fixture).",
    input=JSON_SCHEMA_2020_12,
    **FIXTURE,
)
def json_schema_tool(args: dict[str, Any]) -> Any:  # no output schema, as the Node fixture
    return {"received": args}


FIXTURES = [simple_text, error_handling, with_progress, json_schema_tool]
