"""In-band confirmation (issue 18): ``create_mcp_server(...,
confirm_in_client=[...])`` puts an approval of a mapped type to the person
at the client through MCP elicitation — the ``mcp`` SDK's own ``Client``
answering — as Node's ``confirmInClient`` does. Each test runs on both
ways the question travels: ``legacy`` (up to 2025-11-25, an
``elicitation/create`` request sent mid-call) and ``auto`` (2026-07-28, an
``InputRequiredResult`` the client answers by repeating the call)."""

from __future__ import annotations

from typing import Any

import mcp.types as types
import pytest
from mcp import Client
from pydantic import BaseModel

from orpc_agent import Frame, capability, create_capability_registry
from orpc_agent.mcp import APPROVAL_META, ERROR_META, create_mcp_server


class Refund(BaseModel):
    id: str
    amount: int


def build(calls: list[dict[str, Any]], **options: Any) -> Any:
    @capability(
        id="orders.refund",
        description="Refund an order.",
        expose={"mcp": True},
        side_effect="write",
        risk="high",
        approval={"required": True, "type": "human-confirmation"},
    )
    async def refund(r: Refund) -> dict[str, Any]:
        calls.append(r.model_dump())
        return {"refunded": r.amount, "id": r.id}

    return create_capability_registry([refund], **options)


def answering(action: str | None, asked: list[types.ElicitRequestParams]) -> Any:
    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)  # type: ignore[arg-type]

    return callback


MODES = pytest.mark.parametrize("mode", ["legacy", "auto"])


async def call(
    registry: Any, action: str | None, asked: list[Any], mode: str, types_: tuple[str, ...] = ("human-confirmation",)
) -> Any:
    server = create_mcp_server(registry, frame=lambda ctx: Frame("mcp", actor={"id": "ana"}), confirm_in_client=types_)
    kwargs = {} if action is None else {"elicitation_callback": answering(action, asked)}
    async with Client(server, mode=mode, **kwargs) as client:
        return await client.call_tool("orders_refund", {"id": "o-7", "amount": 20})


@MODES
async def test_accept_records_the_caller_and_runs_once(mode: str) -> None:
    calls: list[dict[str, Any]] = []
    asked: list[Any] = []
    registry = build(calls)
    result = await call(registry, "accept", asked, mode)
    assert result.is_error is False, result
    assert calls == [{"id": "o-7", "amount": 20}]
    assert len(asked) == 1
    assert asked[0].message.startswith('Allow "orders_refund" to run with {"id":"o-7","amount":20}?')
    (request,) = registry.approvals.list()
    assert (request.status, request.decided_by) == ("consumed", "ana")


@MODES
async def test_decline_and_cancel_reject_and_nothing_runs(mode: str) -> None:
    for action in ("decline", "cancel"):
        calls: list[dict[str, Any]] = []
        registry = build(calls)
        result = await call(registry, action, [], mode)
        assert result.is_error and result.meta[ERROR_META]["code"] == "APPROVAL_REJECTED"  # type: ignore[index]
        assert calls == []
        (request,) = registry.approvals.list()
        assert (request.status, request.decision_reason) == ("rejected", "Declined in the MCP client (elicitation).")


@MODES
async def test_without_elicitation_or_for_an_unmapped_type_the_call_waits(mode: str) -> None:
    for action, types_ in ((None, ("human-confirmation",)), ("accept", ("manager",))):
        calls: list[dict[str, Any]] = []
        asked: list[Any] = []
        registry = build(calls)
        result = await call(registry, action, asked, mode, types_)
        assert result.meta[APPROVAL_META]["status"] == "approval_required"  # type: ignore[index]
        assert (calls, asked) == ([], [])
        assert registry.approvals.list()[0].status == "pending"


@MODES
async def test_under_approver_must_differ_the_requesters_accept_decides_nothing(mode: str) -> None:
    calls: list[dict[str, Any]] = []
    asked: list[Any] = []
    registry = build(calls, approver_must_differ=True)
    result = await call(registry, "accept", asked, mode)
    assert len(asked) == 1
    assert result.meta[APPROVAL_META]["status"] == "approval_required"  # type: ignore[index]
    assert calls == []
    assert registry.approvals.list()[0].status == "pending"
