"""tests/vectors/mcp: the same capabilities give the same tools/list and
tools/call results from this adapter as from Node's, through the MCP SDK's
own in-memory ``Client``, sending only ``{name, arguments}``. Results are
compared as the JSON the client received (``model_dump(by_alias=True,
exclude_none=True)``), approval ids and times normalized. The same cases
run in bindings-node/test/adapters/vectors-mcp.test.mjs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from orpc_agent import Frame, create_capability_registry, define_capability
from orpc_agent.mcp import create_mcp_server
from test_vectors import _handler, _policy

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors" / "mcp"
CASES = json.loads((VECTORS / "tools.json").read_text())["cases"]
APPROVAL_ID = re.compile(r"apr_[0-9a-f]{32}")
TOOL_FIELDS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations", "_meta")
RESULT_FIELDS = ("content", "structuredContent", "isError", "_meta")


def adapter_fields(value: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """What the adapter decides, as tests/vectors/README.md (section mcp/)
    says: the listed fields only (each SDK adds its own: Node's
    ``execution``, Python's ``resultType``), ``_meta`` only under
    ``orpc-agent/``."""
    out = {f: value[f] for f in fields if f in value}
    if "_meta" in out:
        out["_meta"] = {k: v for k, v in out["_meta"].items() if k.startswith("orpc-agent/")}
        if not out["_meta"]:
            del out["_meta"]
    return out


def normalize(value: Any, ids: dict[str, str]) -> Any:
    """Approval ids numbered in order of appearance, times as ``<ms>``."""
    if isinstance(value, list):
        return [normalize(v, ids) for v in value]
    if isinstance(value, dict):
        return {
            k: "<ms>" if k.endswith("At") and isinstance(v, int) and not isinstance(v, bool) else normalize(v, ids)
            for k, v in value.items()
        }
    if isinstance(value, str):
        return APPROVAL_ID.sub(lambda m: ids.setdefault(m.group(0), f"<approval-{len(ids) + 1}>"), value)
    return value


def wire(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
async def test_mcp_vector(case: dict[str, Any]) -> None:
    named = {name: _policy(p) for name, p in (case.get("hostPolicies") or {}).items()}
    specs = [
        define_capability(_handler(cap_id, c["handler"], {}), id=cap_id, meta=c["meta"], host_policies=named)
        for cap_id, c in case["capabilities"].items()
    ]
    registry = create_capability_registry(specs, options=case.get("options") or {}, host_policies=named)
    frame = case.get("frame") or {}
    server = create_mcp_server(registry, frame=lambda ctx: Frame("mcp", actor=frame.get("actor")))
    dump_to = os.environ.get("MCP_VECTORS_DUMP")  # authoring: what this adapter answers, one JSON line each

    def write(v: Any) -> None:
        with open(dump_to, "a") as f:  # type: ignore[arg-type]
            f.write(json.dumps(v) + "\n")

    ids: dict[str, str] = {}
    async with Client(server) as client:
        tools = [adapter_fields(wire(t), TOOL_FIELDS) for t in (await client.list_tools()).tools]
        if dump_to:
            write({"list": tools})
        else:
            assert tools == case["list"]
        for call in case["calls"]:
            if "approve" in call:
                # A human's decision, through the registry (an approval UI's path).
                real = next(i for i, label in ids.items() if label == call["approve"])
                registry.approvals.approve(real, approver=call["approver"])
                continue
            result = await client.call_tool(call["tool"], call["arguments"])
            if call.get("unknownTool"):
                assert result.is_error, call["name"]  # the SDK's own answer, worded by each SDK
                continue
            got = normalize(adapter_fields(wire(result), RESULT_FIELDS), ids)
            if dump_to:
                write({"name": call["name"], "result": got})
            else:
                assert got == call["result"], call["name"]
