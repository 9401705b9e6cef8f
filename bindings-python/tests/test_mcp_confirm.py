"""In-band confirmation (issue 18): ``create_mcp_server(...,
confirm_in_client=[...])`` puts an approval of a mapped type to the person
at the client through MCP elicitation — the ``mcp`` SDK's own ``Client``
answering — as Node's ``confirmInClient`` does. Each test runs on both
ways the question travels: ``legacy`` (up to 2025-11-25, an
``elicitation/create`` request sent mid-call) and ``auto`` (2026-07-28, an
``InputRequiredResult`` the client answers by repeating the call)."""

from __future__ import annotations

import asyncio
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


def build(calls: list[dict[str, Any]], redact_approval_input: Any = None, **options: Any) -> Any:
    @capability(
        id="orders.refund",
        description="Refund an order.",
        expose={"mcp": True},
        side_effect="write",
        risk="high",
        approval={"required": True, "type": "human-confirmation"},
        redact_approval_input=redact_approval_input,
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
async def test_an_approval_view_with_no_json_form_asks_nobody_and_the_request_waits(mode: str) -> None:
    """Not the caller's arguments to fix (INVALID_INPUT): the person cannot
    be shown the view, so the request waits for an approver, as for a
    client that cannot be asked."""
    calls: list[dict[str, Any]] = []
    asked: list[Any] = []
    registry = build(calls, redact_approval_input=lambda value, info: {"s": "a\ud800"})
    result = await call(registry, "accept", asked, mode)
    assert result.meta[APPROVAL_META]["status"] == "approval_required", result  # type: ignore[index]
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


@MODES
async def test_two_identical_calls_asked_at_once_the_first_accept_runs_it_the_second_reads_what_became_of_it(
    mode: str,
) -> None:
    # Both calls find the one pending request (same caller, same input) and
    # both are asked. The second accept's decision is refused (the request is
    # decided); the model must read that it ran, not "approval required, call
    # again", which would open a second request to approve.
    calls: list[dict[str, Any]] = []
    audit: list[dict[str, Any]] = []
    both_gated = asyncio.Event()

    def record(r: dict[str, Any]) -> None:
        audit.append(r)
        if sum(1 for x in audit if x["event"] == "finished" and x["outcome"] == "approval_required") == 2:
            both_gated.set()

    registry = build(calls, audit=record)
    first_answer: asyncio.Future[types.ElicitResult] = asyncio.get_running_loop().create_future()
    asked: list[str] = []

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        if len(asked) == 1:
            return await first_answer
        return types.ElicitResult(action="accept", content={})

    server = create_mcp_server(
        registry, frame=lambda ctx: Frame("mcp", actor={"id": "ana"}), confirm_in_client=("human-confirmation",)
    )
    args = {"id": "o-7", "amount": 20}
    async with Client(server, mode=mode, elicitation_callback=callback) as client:
        first = asyncio.create_task(client.call_tool("orders_refund", args))
        second = asyncio.create_task(client.call_tool("orders_refund", args))
        await asyncio.wait_for(both_gated.wait(), 10)
        # The second accept ran it (bounded wait); only then comes the first's.
        for _ in range(1000):
            if calls:
                break
            await asyncio.sleep(0.01)
        first_answer.set_result(types.ElicitResult(action="accept", content={}))
        results = await asyncio.wait_for(asyncio.gather(first, second), 10)
    ran = [r for r in results if r.is_error is False]
    (twin,) = [r for r in results if r.is_error]
    assert len(ran) == 1, results
    # In 2026-07-28 the answer comes with the call repeated: it decides the
    # request it was asked about, never a fresh one (which the person would
    # be asked about again, and which would run the refund twice).
    assert twin.meta[ERROR_META]["code"] == "APPROVAL_CONSUMED"  # type: ignore[index]
    assert APPROVAL_META not in (twin.meta or {})
    assert len(set(asked)) == 1 and len(asked) == 2  # one request, asked about twice
    assert calls == [args]
    assert [r.status for r in registry.approvals.list()] == ["consumed"]


async def decided_while_asked(
    decide_elsewhere: Any, action: str, mode: str = "legacy"
) -> tuple[Any, Any, list[dict[str, Any]]]:
    """One call whose person is asked while an approval UI decides the
    request (``decide_elsewhere(registry, id)``), then answers ``action``:
    the call's result, the registry and the refunds that ran. In ``auto``
    mode (2026-07-28) the answer comes with the call repeated."""
    calls: list[dict[str, Any]] = []
    registry = build(calls)

    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        (request,) = await registry.approvals.list_async()
        await decide_elsewhere(registry, request.id)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)  # type: ignore[arg-type]

    server = create_mcp_server(
        registry, frame=lambda ctx: Frame("mcp", actor={"id": "ana"}), confirm_in_client=("human-confirmation",)
    )
    async with Client(server, mode=mode, elicitation_callback=callback) as client:
        result = await client.call_tool("orders_refund", {"id": "o-7", "amount": 20})
    return result, registry, calls


@MODES
async def test_a_request_rejected_in_an_approval_ui_while_the_person_was_asked_reads_the_rejection(mode: str) -> None:
    result, _, calls = await decided_while_asked(
        lambda registry, id: registry.approvals.reject_async(id, approver="lead"), "accept", mode
    )
    assert result.is_error and result.meta[ERROR_META]["code"] == "APPROVAL_REJECTED"
    assert calls == []


@MODES
async def test_a_request_approved_elsewhere_while_the_person_was_asked_is_never_run_by_their_decline(mode: str) -> None:
    result, registry, calls = await decided_while_asked(
        lambda registry, id: registry.approvals.approve_async(id, approver="lead"), "decline", mode
    )
    assert result.meta[APPROVAL_META]["status"] == "approval_required"
    assert calls == []
    assert registry.approvals.list()[0].status == "approved"
