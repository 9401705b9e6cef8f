"""The OpenAI Agents SDK adapter, driven by the SDK's own offline model
(``agents.testing.ScriptedModel``, an implementation of its ``Model``
interface): a real ``Runner`` tool loop, no network."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from agents import Agent, RunContextWrapper, Runner, RunState, UserError, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext

import agent_caps
from agent_caps import CARD, EMAIL, build, finished
from orpc_agent import (
    ApprovalConsumedError,
    ApprovalNotFoundError,
    Frame,
    PolicyDeniedError,
    capability,
    create_capability_registry,
)
from orpc_agent.openai_agents import PrincipalRequiredError, governed_tools

set_tracing_disabled(True)

# The caller, as the app's authenticated transport gives it; its surface is
# replaced by the adapter's (aiSdk).
ANA = Frame("direct", actor={"id": "ana"}, session_id="conv-1")


@pytest.fixture(autouse=True)
def _count() -> None:
    agent_caps.CALLS.clear()


def outputs(model: ScriptedModel, turn: int) -> dict[str, str]:
    """What the model was sent of each tool call, by call id, at that turn."""
    items = model.calls[turn].input
    assert isinstance(items, list)
    return {i["call_id"]: i["output"] for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"}


def first_turn() -> list[Any]:
    return [
        function_call("orders_get", {"email": EMAIL}, call_id="call_get"),
        function_call("orders_purge", {"email": EMAIL}, call_id="call_purge"),
        function_call("orders_refund", {"order": "o-1", "cents": 500}, call_id="call_refund"),
    ]


def test_tools_come_from_the_aisdk_descriptors() -> None:
    @capability(id="notes.put", description="Store a note.", expose={"aiSdk": True}, side_effect="none", risk="low")
    async def put(note: dict[str, Any]) -> str:
        return "ok"

    tools = governed_tools(build(), ANA)
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"orders_get", "orders_purge", "orders_refund"}  # orders.internal is direct only
    get = by_name["orders_get"]
    assert get.description == "Find the customer's order by email."
    assert get.strict_json_schema is True
    assert get.params_json_schema["required"] == ["email"]
    assert get.params_json_schema["additionalProperties"] is False
    # An open object cannot be made strict without changing what it accepts.
    [open_tool] = governed_tools(create_capability_registry([put]), ANA)
    assert open_tool.strict_json_schema is False
    assert open_tool.params_json_schema["additionalProperties"] is True


async def test_read_refused_gated_approved_resumed_once_and_a_replay_refused(tmp_path: Path) -> None:
    audit: list[dict[str, Any]] = []
    store = {"sqlite": str(tmp_path / "approvals.db")}
    ids: dict[str, str] = {}  # where request ids wait: shared by both "processes"
    model = ScriptedModel([first_turn(), [assistant_message("Refunded.")], [assistant_message("Already refunded.")]])

    registry = build(audit.append, store)
    agent = Agent(name="support", model=model, tools=governed_tools(registry, ANA, approval_ids=ids))
    result = await Runner.run(agent, "Refund Ana's order.")
    # The read ran, the purge was refused, the refund waits for a human.
    assert [i.tool_name for i in result.interruptions] == ["orders_refund"]
    assert dict(agent_caps.CALLS) == {"orders.get": 1}
    snapshot = result.to_state().to_string()

    # Another process: a new registry on the same store, new tools, the run
    # state read back from its JSON.
    registry2 = build(audit.append, store)
    tools2 = governed_tools(registry2, ANA, approval_ids=ids)
    agent2 = Agent(name="support", model=model, tools=tools2)
    state = await RunState.from_string(agent2, snapshot)
    [item] = state.get_interruptions()
    request = await tools2.request(item)
    assert request is not None
    assert (request.status, request.type, request.capability_id, request.actor_id) == (
        "pending",
        "refund",
        "orders.refund",
        "ana",
    )
    decided = await tools2.approve(state, item, approver="lead")
    assert (decided.status, decided.decided_by) == ("approved", "lead")
    done = await Runner.run(agent2, state)
    assert done.final_output == "Refunded."
    assert agent_caps.CALLS["orders.refund"] == 1

    sent = outputs(model, 1)
    # Redaction: the model reads the redacted output only.
    assert json.loads(sent["call_get"]) == {"id": "o-1", "email": "a***@example.com", "card": "****1111"}
    assert sent["call_purge"].startswith(
        'POLICY_DENIED: Denied by policy "no-purge": Purging is disabled; archive instead.'
    )
    assert "do not retry it unchanged" in sent["call_purge"]  # the core's hint
    assert json.loads(sent["call_refund"]) == {"refunded": "o-1", "cents": 500}
    assert (await registry2.approvals.get_async(request.id)).status == "consumed"  # type: ignore[union-attr]

    # A replay: the snapshot of the interruption, approved again.
    replay = await RunState.from_string(agent2, snapshot)
    [again] = replay.get_interruptions()
    with pytest.raises(ApprovalConsumedError):  # the core refuses a second decision
        await tools2.approve(replay, again, approver="lead")
    replay.approve(again)  # the SDK's own approval: the core refuses the second run
    replayed = await Runner.run(agent2, replay)
    assert replayed.final_output == "Already refunded."
    assert agent_caps.CALLS["orders.refund"] == 1
    assert outputs(model, 2)["call_refund"].startswith("APPROVAL_CONSUMED: ")
    assert dict(agent_caps.CALLS) == {"orders.get": 1, "orders.refund": 1}  # nothing ran twice

    # Audit: one record per governed call, on aiSdk, as ana, the tool call id
    # as request id; the read's output redacted; no raw value anywhere.
    records = finished(audit)
    assert sorted(records[:3]) == [
        ("orders.get", "ok", False),
        ("orders.purge", "POLICY_DENIED", False),
        ("orders.refund", "approval_required", False),
    ]
    assert records[3:] == [("orders.refund", "ok", True), ("orders.refund", "APPROVAL_CONSUMED", True)]
    done_records = [r for r in audit if r["event"] == "finished"]
    assert {(r["surface"], r["actorId"], r["sessionId"]) for r in done_records} == {("aiSdk", "ana", "conv-1")}
    assert {r["requestId"] for r in done_records} == {"call_get", "call_purge", "call_refund"}
    [read] = [r for r in done_records if r["capabilityId"] == "orders.get"]
    assert read["output"] == {"id": "o-1", "email": "a***@example.com", "card": "****1111"}
    text = json.dumps(audit)
    assert EMAIL not in text and CARD not in text
    assert {r["approvalId"] for r in done_records if r["capabilityId"] == "orders.refund"} == {request.id}


async def test_a_rejection_is_the_core_s_and_the_model_reads_the_core_s_answer() -> None:
    audit: list[dict[str, Any]] = []
    registry = build(audit.append)
    tools = governed_tools(registry, ANA)
    model = ScriptedModel(
        [
            [function_call("orders_refund", {"order": "o-1", "cents": 500}, call_id="call_r")],
            [assistant_message("It was not approved.")],
        ]
    )
    agent = Agent(name="support", model=model, tools=tools)
    result = await Runner.run(agent, "Refund.")
    state = result.to_state()
    [item] = state.get_interruptions()
    decided = await tools.reject(state, item, approver="lead", reason="Not this one.")
    assert (decided.status, decided.decided_by) == ("rejected", "lead")
    done = await Runner.run(agent, state)
    assert done.final_output == "It was not approved."
    assert agent_caps.CALLS["orders.refund"] == 0
    assert outputs(model, 1)["call_r"] == (
        "APPROVAL_REJECTED: the approval request was rejected. A human rejected this call; do not retry it."
    )
    assert finished(audit) == [
        ("orders.refund", "approval_required", False),
        ("orders.refund", "APPROVAL_REJECTED", True),
    ]


async def test_the_sdk_approval_is_recorded_as_the_core_s_decision_which_the_core_may_refuse() -> None:
    # approver_must_differ: ana may not approve her own refund; the core says so.
    registry = build(approver_must_differ=True)
    tools = governed_tools(registry, ANA)
    model = ScriptedModel(
        [
            [function_call("orders_refund", {"order": "o-1", "cents": 500}, call_id="call_r")],
            [assistant_message("Waiting.")],
        ]
    )
    agent = Agent(name="support", model=model, tools=tools)
    state = (await Runner.run(agent, "Refund.")).to_state()
    [item] = state.get_interruptions()
    with pytest.raises(PolicyDeniedError):
        await tools.approve(state, item, approver="ana")
    state.approve(item)  # the SDK's approval, recorded with the frame's actor (ana): refused
    await Runner.run(agent, state)
    assert agent_caps.CALLS["orders.refund"] == 0
    assert outputs(model, 1)["call_r"].startswith("APPROVAL_PENDING: ")
    request_id = tools.request_id(item)
    assert request_id is not None
    assert (await registry.approvals.get_async(request_id)).status == "pending"  # type: ignore[union-attr]


async def test_a_gated_call_needs_a_caller_the_approval_can_be_kept_for() -> None:
    registry = build()
    tools = governed_tools(registry, Frame("aiSdk"))  # no actor id, no session
    model = ScriptedModel([[function_call("orders_refund", {"order": "o-1", "cents": 5}, call_id="call_r")]])
    with pytest.raises(UserError) as raised:  # the SDK wraps what a tool raises
        await Runner.run(Agent(name="support", model=model, tools=tools), "Refund.")
    assert isinstance(raised.value.__cause__, PrincipalRequiredError)
    assert agent_caps.CALLS["orders.refund"] == 0
    assert registry.approvals.list() == []  # the core refused before storing a request


async def test_invalid_arguments_get_the_core_s_validation_text() -> None:
    tools = governed_tools(build(), ANA)
    model = ScriptedModel(
        [
            [function_call("orders_get", {"email": 3}, call_id="call_bad")],
            [assistant_message("Sorry.")],
        ]
    )
    await Runner.run(Agent(name="support", model=model, tools=tools), "Find.")
    text = outputs(model, 1)["call_bad"]
    assert text.startswith("INVALID_INPUT: ") and "email" in text
    assert "Fix the arguments" in text


async def test_an_undecided_call_asked_again_keeps_its_one_request() -> None:
    registry = build()
    tools = governed_tools(registry, ANA)
    call = function_call("orders_refund", {"order": "o-1", "cents": 500}, call_id="call_r")
    model = ScriptedModel([[call], [call]])
    agent = Agent(name="support", model=model, tools=tools)
    state = (await Runner.run(agent, "Refund.")).to_state()
    # Run again without a decision; then a new run that presents the same
    # tool call again (the gate is asked about it a second time).
    again = await Runner.run(agent, state)
    assert [i.tool_name for i in again.interruptions] == ["orders_refund"]
    fresh = await Runner.run(agent, "Refund.")
    assert [i.tool_name for i in fresh.interruptions] == ["orders_refund"]
    pending = await registry.approvals.list_async(status="pending")
    assert [r.capability_id for r in pending] == ["orders.refund"]
    assert agent_caps.CALLS["orders.refund"] == 0
    # A provider that reuses the call id for another tool: that call is not
    # the kept one (another capability), so it is asked of the core afresh.
    reused = ScriptedModel(
        [[function_call("orders_get", {"email": EMAIL}, call_id="call_r")], [assistant_message("Found.")]]
    )
    read = await Runner.run(Agent(name="support", model=reused, tools=tools), "Find.")
    assert read.interruptions == []
    assert agent_caps.CALLS["orders.get"] == 1
    # An interruption of another tool under that call id does not name the
    # refund's request: nothing to show, nothing approved.
    other: Any = SimpleNamespace(tool_name="orders_get", raw_item={"call_id": "call_r"})
    assert await tools.request(other) is None
    with pytest.raises(ApprovalNotFoundError):
        await tools.approve(cast(Any, None), other, approver="lead")
    assert len(await registry.approvals.list_async(status="pending")) == 1


async def test_a_call_id_reused_with_other_arguments_is_another_call_what_the_person_approves_is_what_runs() -> None:
    registry = build()
    tools = governed_tools(registry, ANA)

    def refund(order: str) -> Any:
        return function_call("orders_refund", {"order": order, "cents": 500}, call_id="call_0")

    first = await Runner.run(Agent(name="support", model=ScriptedModel([[refund("o-1")]]), tools=tools), "Refund o-1.")
    assert len(first.interruptions) == 1
    # A later conversation turn: the provider reuses the call id for another refund.
    model = ScriptedModel([[refund("o-2")], [assistant_message("Done.")]])
    agent = Agent(name="support", model=model, tools=tools)
    second = (await Runner.run(agent, "Refund o-2.")).to_state()
    [item] = second.get_interruptions()
    request = await tools.request(item)
    assert request is not None and request.input == {"order": "o-2", "cents": 500}
    # Approved with the SDK's own API, by a person shown o-2's arguments.
    second.approve(item)
    done = await Runner.run(agent, second)
    assert done.final_output == "Done."
    assert outputs(model, 1)["call_0"] == '{"refunded":"o-2","cents":500}'  # as Node writes it
    assert agent_caps.CALLS["orders.refund"] == 1
    pending = await registry.approvals.list_async(status="pending")
    assert [r.input for r in pending] == [{"order": "o-1", "cents": 500}]  # the first call's, still unrun


async def test_a_call_the_gate_let_through_but_the_sdk_never_called_never_runs_nor_answers_a_later_call() -> None:
    audit: list[dict[str, Any]] = []
    registry = build(audit.append)
    tools = governed_tools(registry, ANA)
    by_name = {t.name: t for t in tools}
    context = RunContextWrapper(context=None)
    # A read that passed the gate, whose run ended before the SDK called the tool.
    assert await by_name["orders_get"].needs_approval(context, {"email": EMAIL}, "call_0") is False
    assert "orders.get" not in agent_caps.CALLS, "held before its handler: nothing ran"
    # Later the provider reuses the call id for a refund, which is approved and called.
    refund = {"order": "o-1", "cents": 500}
    assert await by_name["orders_refund"].needs_approval(context, refund, "call_0") is True
    arguments = json.dumps(refund)
    tool_context = ToolContext(None, tool_name="orders_refund", tool_call_id="call_0", tool_arguments=arguments)
    text = await by_name["orders_refund"].on_invoke_tool(tool_context, arguments)
    assert json.loads(text) == {"refunded": "o-1", "cents": 500}  # the refund's own outcome, not the read's
    assert agent_caps.CALLS["orders.refund"] == 1
    assert "orders.get" not in agent_caps.CALLS, "the read nobody called never ran"
    ended = [r["outcome"] for r in audit if r["event"] == "finished" and r["capabilityId"] == "orders.get"]
    assert ended == ["CANCELLED"]


async def test_a_call_held_before_its_handler_that_the_sdk_never_calls_ends_at_its_deadline_unstarted() -> None:
    audit: list[dict[str, Any]] = []
    registry = build(audit.append, defaults={"timeoutMs": 40})
    get = next(t for t in governed_tools(registry, ANA) if t.name == "orders_get")
    assert await get.needs_approval(RunContextWrapper(context=None), {"email": EMAIL}, "call_1") is False
    for _ in range(1000):  # bounded: the deadline is 40 ms away
        if any(r["event"] == "finished" for r in audit):
            break
        await asyncio.sleep(0.01)
    assert [(r["outcome"], r["attempts"]) for r in audit if r["event"] == "finished"] == [("TIMEOUT", 1)]
    assert "orders.get" not in agent_caps.CALLS


async def test_only_the_sdk_s_call_starts_a_held_handler_never_a_timer_before_the_core_s_deadline() -> None:
    # The registry's own clock stands still (a test clock): the wait's timer
    # fires every 40 ms, the core's deadline never comes, and nothing runs
    # until the SDK calls the tool — here, until another call under the id ends it.
    audit: list[dict[str, Any]] = []
    registry = build(audit.append, clock=lambda: 1_700_000_000_000, defaults={"timeoutMs": 40})
    by_name = {t.name: t for t in governed_tools(registry, ANA)}
    context = RunContextWrapper(context=None)
    assert await by_name["orders_get"].needs_approval(context, {"email": EMAIL}, "call_2") is False
    await asyncio.sleep(0.15)
    assert "orders.get" not in agent_caps.CALLS
    assert await by_name["orders_refund"].needs_approval(context, {"order": "o-1", "cents": 5}, "call_2") is True

    def ended() -> list[str]:
        return [r["outcome"] for r in audit if r["event"] == "finished" and r["capabilityId"] == "orders.get"]

    for _ in range(1000):  # bounded
        if ended():
            break
        await asyncio.sleep(0.01)
    assert ended() == ["CANCELLED"]
    assert "orders.get" not in agent_caps.CALLS


async def test_a_kept_request_gone_from_the_store_is_never_asked_again() -> None:
    # A memory store drops consumed requests after a day: a call run then
    # replayed must not open a second request a person could approve.
    ids: dict[str, str] = {}
    registry = build()
    refund = next(t for t in governed_tools(registry, ANA, approval_ids=ids) if t.name == "orders_refund")
    context = RunContextWrapper(context=None)
    args = {"order": "o-1", "cents": 5}
    assert await refund.needs_approval(context, args, "call_9") is True
    for key in ids:
        ids[key] = "apr_" + "0" * 32  # the request it named is gone
    assert await refund.needs_approval(context, args, "call_9") is False
    arguments = json.dumps(args)
    tool_context = ToolContext(None, tool_name="orders_refund", tool_call_id="call_9", tool_arguments=arguments)
    text = await refund.on_invoke_tool(tool_context, arguments)
    assert text.startswith("APPROVAL_NOT_FOUND: ")
    assert len(await registry.approvals.list_async()) == 1  # no second request
    assert "orders.refund" not in agent_caps.CALLS


async def test_a_call_presented_again_after_it_ran_or_was_rejected_elsewhere_is_answered_not_asked_again() -> None:
    audit: list[dict[str, Any]] = []
    registry = build(audit.append)
    tools = governed_tools(registry, ANA)

    def call(call_id: str) -> Any:
        return function_call("orders_refund", {"order": "o-1", "cents": 500}, call_id=call_id)

    model = ScriptedModel(
        [
            [call("call_r")],
            [assistant_message("Refunded.")],
            [call("call_r")],
            [assistant_message("Already done.")],
            [call("call_s")],
            [call("call_s")],
            [assistant_message("Refused.")],
        ]
    )
    agent = Agent(name="support", model=model, tools=tools)
    first = (await Runner.run(agent, "Refund.")).to_state()
    saved = first.to_string()  # the call undecided
    [item] = first.get_interruptions()
    await tools.approve(first, item, approver="lead")
    assert (await Runner.run(agent, first)).final_output == "Refunded."

    # The saved state replayed shows its one request, consumed: no second.
    replay = await RunState.from_string(agent, saved)
    [again] = replay.get_interruptions()
    kept = await tools.request(again)
    assert kept is not None and kept.status == "consumed"

    # The same call presented again (a history replayed to the model): the
    # gate is asked about it. A second request here is one a person could
    # approve, and the refund would run twice.
    replayed = await Runner.run(agent, "Refund.")
    assert replayed.interruptions == []
    assert replayed.final_output == "Already done."
    assert outputs(model, 3)["call_r"].startswith("APPROVAL_CONSUMED: ")

    # A request rejected in an approval UI (not through a run state), its
    # call presented again.
    second = await Runner.run(agent, "Refund again.")
    [other] = second.interruptions
    other_id = tools.request_id(other)
    assert other_id is not None
    await registry.approvals.reject_async(other_id, approver="lead")
    refused = await Runner.run(agent, "Refund again.")
    assert refused.interruptions == []
    assert outputs(model, 6)["call_s"].startswith("APPROVAL_REJECTED: ")

    assert agent_caps.CALLS["orders.refund"] == 1
    assert sorted(r.status for r in await registry.approvals.list_async()) == ["consumed", "rejected"]
    assert finished(audit)[-2:] == [
        ("orders.refund", "approval_required", False),
        ("orders.refund", "APPROVAL_REJECTED", True),
    ]
