"""What Python hands an application from the core — approval requests,
audit records, what a redactor is told — validates against the one wire
schema (``schema/wire.schema.json``, written from the core's lists by
``cargo run -p orpc-agent-core --example mirrors``), and the dataclasses
that carry them name the schema's fields (snake_case), no more, no fewer."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel

from orpc_agent import (
    ApprovalRequest,
    ApprovalRequired,
    Frame,
    NotFoundError,
    RedactionInfo,
    capability,
    create_capability_registry,
)
from orpc_agent.postgres import ApprovalPage

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "schema" / "wire.schema.json").read_text())


def check(name: str, value: Any) -> None:
    jsonschema.validate(value, {"$ref": f"#/$defs/{name}", **SCHEMA})


def refused(name: str, value: Any) -> bool:
    return not jsonschema.Draft202012Validator({"$ref": f"#/$defs/{name}", **SCHEMA}).is_valid(value)


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def thaw(value: Any) -> Any:
    """A frozen copy's JSON form: mappings as dicts, tuples as lists."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [thaw(v) for v in value]
    return value


def fields(cls: type, *, besides: set[str]) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)} - besides


class Refund(BaseModel):
    id: str


infos: list[RedactionInfo] = []


def _mask(output: dict[str, Any], info: RedactionInfo) -> dict[str, Any]:
    infos.append(info)
    return {**output, "card": "[redacted]"}


@capability(
    id="orders.refund",
    description="Refund.",
    expose={"direct": True, "mcp": True},
    side_effect="write",
    risk="high",
    approval={"required": True, "type": "manager"},
    policies=[{"name": "shadowed", "mode": "shadow", "when": {"surface": ["mcp"]}, "decision": "deny"}],
    redact_output=_mask,
)
async def refund(r: Refund) -> dict[str, Any]:
    return {"id": r.id, "card": "4111 1111 1111 1111"}


async def test_requests_records_and_redaction_info_validate_against_the_wire_schema() -> None:
    infos.clear()
    records: list[dict[str, Any]] = []
    reg = create_capability_registry([refund], audit=records.append, audit_payloads=True)
    frame = Frame(
        "mcp",
        actor={"id": "u", "roles": ["clerk"], "attributes": {"team": "eu"}},
        traceparent="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        tracestate="k=v",
        request_id="r1",
        session_id="s1",
    )
    gated = await reg.invoke("orders.refund", {"id": "1"}, frame)
    assert isinstance(gated, ApprovalRequired)
    check("ApprovalRequest", gated.request.to_dict())
    for r in reg.approvals.page().requests:
        check("ApprovalRequest", r.to_dict())
    check("ApprovalRequest", reg.approvals.approve(gated.request.id, approver="m", reason="fine").to_dict())
    done = await reg.resume(gated.request.id, Frame("direct", request_id="r2"))
    assert done.output == {"id": "1", "card": "[redacted]"}  # type: ignore[union-attr]
    got = reg.approvals.get(gated.request.id)
    assert got is not None
    check("ApprovalRequest", got.to_dict())

    with pytest.raises(NotFoundError):
        await reg.invoke("no.such", {}, frame)

    assert len(records) >= 4
    assert any(r["capabilityId"] is None for r in records), "an unresolved call's record"
    for record in records:
        check("AuditRecord", record)
    assert any(len(r["policies"]) == 1 and r["policies"][0]["mode"] == "shadow" for r in records)
    assert len(infos) == 1
    info = infos[0]
    # The actor is a frozen copy (tuples, a read-only mapping): its JSON form.
    check("RedactionInfo", {"surface": info.surface, "capabilityId": info.capability_id, "actor": thaw(info.actor)})


def test_the_schema_refuses_what_the_core_never_sends() -> None:
    request = {
        "id": "apr_0",
        "capabilityId": "c",
        "input": {},
        "surface": "mcp",
        "actor": {"roles": [], "attributes": {}},
        "createdAt": 1,
        "expiresAt": 2,
        "status": "pending",
    }
    check("ApprovalRequest", request)
    assert refused("ApprovalRequest", {**request, "inputHash": "h"})
    assert refused("ApprovalRequest", {**request, "surface": "constructor"})
    assert refused("ApprovalRequest", {**request, "status": "lost"})
    assert refused("ApprovalRequest", {k: v for k, v in request.items() if k != "status"})


def test_the_dataclasses_name_the_schemas_fields() -> None:
    defs = SCHEMA["$defs"]
    # `raw` keeps the JSON form itself.
    assert fields(ApprovalRequest, besides={"raw"}) == {snake(p) for p in defs["ApprovalRequest"]["properties"]}
    assert fields(ApprovalPage, besides=set()) == {snake(p) for p in defs["ApprovalPage"]["properties"]}
    # `context` is the application's own object: never sent.
    assert fields(RedactionInfo, besides={"context"}) == {snake(p) for p in defs["RedactionInfo"]["properties"]}
    # A field the core may leave out is one the dataclass lets be None.
    hints = {f.name: str(f.type) for f in dataclasses.fields(ApprovalRequest)}
    required = set(defs["ApprovalRequest"]["required"])
    for prop in defs["ApprovalRequest"]["properties"]:
        if prop != "input":
            assert ("None" in hints[snake(prop)]) == (prop not in required), prop
