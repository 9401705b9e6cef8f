"""The PydanticAI adapter, driven by PydanticAI's own offline models
(``FunctionModel`` scripted turn by turn, ``TestModel``): real agent runs,
deferred approvals, no network."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved

import agent_caps
from agent_caps import CARD, EMAIL, build, finished
from orpc_agent import ApprovalConsumedError, ApprovalNotFoundError, ApprovalRequired, Frame
from orpc_agent._agent_tools import model_frame
from orpc_agent.pydantic_ai import APPROVAL_META, PrincipalRequiredError, governed_toolset

ANA = Frame("direct", actor={"id": "ana"}, session_id="conv-1")
REFUND = {"order": "o-1", "cents": 500}


@pytest.fixture(autouse=True)
def _count() -> None:
    agent_caps.CALLS.clear()


class Script:
    """A ``FunctionModel`` function: the next scripted response each turn,
    and what the model was sent, turn by turn."""

    def __init__(self, *turns: list[Any]) -> None:
        self.turns = list(turns)
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        return ModelResponse(parts=self.turns.pop(0))

    def returns(self, turn: int) -> dict[str, tuple[Any, str]]:
        """The tool results the model read at that turn: (content, outcome) by call id."""
        last = self.seen[turn][-1]
        assert isinstance(last, ModelRequest)
        return {p.tool_call_id: (p.content, p.outcome) for p in last.parts if isinstance(p, ToolReturnPart)}


def agent_for(script: Script, toolset: Any) -> Agent[None, str | DeferredToolRequests]:
    return Agent(FunctionModel(script), output_type=[str, DeferredToolRequests], toolsets=[toolset])


def first_turn() -> list[Any]:
    return [
        ToolCallPart("orders_get", {"email": EMAIL}, tool_call_id="call_get"),
        ToolCallPart("orders_purge", {"email": EMAIL}, tool_call_id="call_purge"),
        ToolCallPart("orders_refund", REFUND, tool_call_id="call_refund"),
    ]


async def test_the_toolset_lists_the_aisdk_descriptors() -> None:
    toolset = governed_toolset(build(), ANA)
    tools = await toolset.get_tools(None)  # type: ignore[arg-type]
    assert set(tools) == {"orders_get", "orders_purge", "orders_refund"}  # orders.internal is direct only
    get = tools["orders_get"].tool_def
    assert get.description == "Find the customer's order by email."
    assert get.parameters_json_schema["required"] == ["email"]
    # TestModel calls every tool with arguments made from that schema.
    result = await Agent(TestModel(call_tools=["orders_get"]), toolsets=[toolset]).run("Find.")
    assert agent_caps.CALLS["orders.get"] == 1
    assert "a***@example.com" in result.output and "****1111" in result.output


async def test_read_refused_gated_approved_resumed_once_and_a_replay_refused(tmp_path: Path) -> None:
    audit: list[dict[str, Any]] = []
    store = {"sqlite": str(tmp_path / "approvals.db")}
    script = Script(first_turn(), [TextPart("Refunded.")], [TextPart("Already refunded.")])

    registry = build(audit.append, store)
    first = await agent_for(script, governed_toolset(registry, ANA)).run("Refund Ana's order.")
    requests = first.output
    assert isinstance(requests, DeferredToolRequests)
    assert [c.tool_call_id for c in requests.approvals] == ["call_refund"]
    meta = requests.metadata["call_refund"][APPROVAL_META]
    assert (meta["capabilityId"], meta["type"], meta["status"]) == ("orders.refund", "refund", "approval_required")
    assert "input" not in meta  # the core's description of the request, never its input
    assert dict(agent_caps.CALLS) == {"orders.get": 1}
    # The read's redacted output and the refusal's core text, in the history.
    sent = {
        p.tool_call_id: (p.content, p.outcome) for p in first.all_messages()[-1].parts if isinstance(p, ToolReturnPart)
    }
    assert sent["call_get"] == ({"id": "o-1", "email": "a***@example.com", "card": "****1111"}, "success")
    content, outcome = sent["call_purge"]
    assert outcome == "failed"
    assert content.startswith('POLICY_DENIED: Denied by policy "no-purge": Purging is disabled; archive instead.')
    # What the app keeps: the history and the requests, as JSON.
    history = ModelMessagesTypeAdapter.dump_json(first.all_messages())
    kept = TypeAdapter(DeferredToolRequests).dump_json(requests)

    # Another process: a new registry on the same store and a toolset with
    # no request ids of its own: the id travels in the deferred call's metadata.
    registry2 = build(audit.append, store)
    toolset2 = governed_toolset(registry2, ANA, approval_ids={})
    requests2 = TypeAdapter(DeferredToolRequests).validate_json(kept)
    request = await toolset2.request(requests2, "call_refund")
    assert request is not None and (request.status, request.actor_id) == ("pending", "ana")
    results = await toolset2.answer(requests2, {"call_refund": True}, approver="lead")
    agent2 = agent_for(script, toolset2)
    done = await agent2.run(
        message_history=ModelMessagesTypeAdapter.validate_json(history), deferred_tool_results=results
    )
    assert done.output == "Refunded."
    assert agent_caps.CALLS["orders.refund"] == 1
    assert script.returns(1)["call_refund"] == ({"refunded": "o-1", "cents": 500}, "success")

    # A replay of the same answer: the core refuses the second run.
    with pytest.raises(ApprovalConsumedError):
        await toolset2.answer(requests2, {"call_refund": True}, approver="lead")
    replayed = await agent2.run(
        message_history=ModelMessagesTypeAdapter.validate_json(history), deferred_tool_results=results
    )
    assert replayed.output == "Already refunded."
    content, outcome = script.returns(2)["call_refund"]
    assert outcome == "failed" and content.startswith("APPROVAL_CONSUMED: ")
    assert dict(agent_caps.CALLS) == {"orders.get": 1, "orders.refund": 1}

    records = finished(audit)
    assert records == [
        ("orders.get", "ok", False),
        ("orders.purge", "POLICY_DENIED", False),
        ("orders.refund", "approval_required", False),
        ("orders.refund", "ok", True),
        ("orders.refund", "APPROVAL_CONSUMED", True),
    ]
    done_records = [r for r in audit if r["event"] == "finished"]
    assert {(r["surface"], r["actorId"], r["sessionId"]) for r in done_records} == {("aiSdk", "ana", "conv-1")}
    assert {r["requestId"] for r in done_records} == {"call_get", "call_purge", "call_refund"}
    assert done_records[0]["output"] == {"id": "o-1", "email": "a***@example.com", "card": "****1111"}
    assert {r["approvalId"] for r in done_records[2:]} == {meta["requestId"]}
    text = json.dumps(audit)
    assert EMAIL not in text and CARD not in text


async def test_a_rejection_is_the_core_s_and_the_model_reads_the_core_s_answer() -> None:
    audit: list[dict[str, Any]] = []
    registry = build(audit.append)
    toolset = governed_toolset(registry, ANA)
    script = Script([ToolCallPart("orders_refund", REFUND, tool_call_id="call_r")], [TextPart("Not approved.")])
    agent = agent_for(script, toolset)
    first = await agent.run("Refund.")
    assert isinstance(first.output, DeferredToolRequests)
    results = await toolset.answer(first.output, {"call_r": False}, approver="lead", reason="Not this one.")
    done = await agent.run(message_history=first.all_messages(), deferred_tool_results=results)
    assert done.output == "Not approved."
    assert agent_caps.CALLS["orders.refund"] == 0
    content, _ = script.returns(1)["call_r"]
    assert (
        content == "APPROVAL_REJECTED: the approval request was rejected. A human rejected this call; do not retry it."
    )
    request = await toolset.request(first.output, "call_r")
    assert request is not None and (request.status, request.decided_by) == ("rejected", "lead")
    assert finished(audit) == [
        ("orders.refund", "approval_required", False),
        ("orders.refund", "APPROVAL_REJECTED", True),
    ]


async def test_a_call_presented_again_keeps_its_one_request() -> None:
    registry = build()
    toolset = governed_toolset(registry, ANA)
    script = Script([ToolCallPart("orders_refund", REFUND, tool_call_id="call_r")])
    agent = agent_for(script, toolset)
    first = await agent.run("Refund.")
    assert isinstance(first.output, DeferredToolRequests)
    # The history run again with the call undecided: PydanticAI executes the
    # unprocessed call a second time (twice here).
    for _ in range(2):
        again = await agent.run(message_history=first.all_messages())
        assert isinstance(again.output, DeferredToolRequests)
        assert again.output.metadata == first.output.metadata  # the same request
    pending = await registry.approvals.list_async(status="pending")
    assert [r.capability_id for r in pending] == ["orders.refund"]
    assert agent_caps.CALLS["orders.refund"] == 0


async def test_a_call_id_reused_with_other_arguments_is_another_call() -> None:
    registry = build()
    toolset = governed_toolset(registry, ANA)
    first = await agent_for(Script([ToolCallPart("orders_refund", REFUND, tool_call_id="call_0")]), toolset).run(
        "Refund."
    )
    assert isinstance(first.output, DeferredToolRequests)
    # A later conversation: the provider reuses the call id for another refund.
    other = {**REFUND, "order": "o-2"}
    second = await agent_for(Script([ToolCallPart("orders_refund", other, tool_call_id="call_0")]), toolset).run(
        "Refund o-2."
    )
    assert isinstance(second.output, DeferredToolRequests)
    request = await toolset.request(second.output, "call_0")
    assert request is not None and request.input == other  # its own request, not the first call's
    # Found by the key too (the deferred call's metadata left out, as an app
    # that rebuilds the requests from its own records would).
    bare = DeferredToolRequests(approvals=second.output.approvals)
    assert toolset.request_id(bare, "call_0") == request.id
    assert toolset.request_id(DeferredToolRequests(approvals=first.output.approvals), "call_0") != request.id
    assert len(await registry.approvals.list_async(status="pending")) == 2


async def test_an_approved_call_runs_only_its_own_request_never_one_its_metadata_names_for_another_call() -> None:
    registry = build()
    toolset = governed_toolset(registry, ANA)
    big = {"order": "o-2", "cents": 99999}
    calls = [
        ToolCallPart("orders_refund", REFUND, tool_call_id="c_a"),
        ToolCallPart("orders_refund", big, tool_call_id="c_b"),
    ]
    script = Script(calls, [TextPart("Done.")], [TextPart("Edited.")])
    agent = agent_for(script, toolset)
    first = await agent.run("Refund both.")
    assert isinstance(first.output, DeferredToolRequests)
    id_b = first.output.metadata["c_b"][APPROVAL_META]["requestId"]
    # The person approves the small refund and denies the big one; the
    # results name the big one's request for the small call (metadata
    # copied from the wrong call).
    wrong = DeferredToolResults(
        approvals={"c_a": True, "c_b": False}, metadata={"c_a": {APPROVAL_META: {"requestId": id_b}}}
    )
    await agent.run(message_history=first.all_messages(), deferred_tool_results=wrong)
    content, outcome = script.returns(1)["c_a"]
    assert outcome == "failed" and content.startswith("APPROVAL_NOT_FOUND: ")
    assert "orders.refund" not in agent_caps.CALLS, "the call the person denied never ran"
    assert (await registry.approvals.get_async(id_b)).status == "pending"
    # Approved with edited arguments (PydanticAI's override_args): the
    # request holds the arguments the model sent, so it runs neither.
    edited = DeferredToolResults(
        approvals={"c_a": ToolApproved(override_args={**REFUND, "cents": 5}), "c_b": False},
        metadata=dict(first.output.metadata),
    )
    await agent.run(message_history=first.all_messages(), deferred_tool_results=edited)
    content, outcome = script.returns(2)["c_a"]
    assert outcome == "failed" and content.startswith("APPROVAL_NOT_FOUND: ")
    assert "orders.refund" not in agent_caps.CALLS
    # Another process (no id kept there): the metadata's request runs when it holds these arguments.
    elsewhere = governed_toolset(registry, ANA, approval_ids={})
    results = await elsewhere.answer(first.output, {"c_a": True, "c_b": False}, approver="lead")
    again = Script([TextPart("Refunded.")])
    await agent_for(again, elsewhere).run(message_history=first.all_messages(), deferred_tool_results=results)
    content, outcome = again.returns(0)["c_a"]
    assert outcome == "success" and agent_caps.CALLS["orders.refund"] == 1


async def test_answer_and_request_never_decide_or_show_a_request_the_metadata_names_that_is_another_callers() -> None:
    registry = build()
    # Bob's pending request for the same call, and one of Ana's own for other arguments.
    bob = await registry.invoke("orders.refund", REFUND, model_frame(Frame("direct", actor={"id": "bob"}), "c_b"))
    other = await registry.invoke("orders.refund", {**REFUND, "cents": 7}, model_frame(ANA, "c_o"))
    assert isinstance(bob, ApprovalRequired) and isinstance(other, ApprovalRequired)
    # Ana's toolset in another process (nothing kept), handed deferred calls
    # whose metadata names those requests.
    toolset = governed_toolset(registry, ANA, approval_ids={})
    for named in (bob.request.id, other.request.id):
        forged = DeferredToolRequests(
            approvals=[ToolCallPart("orders_refund", REFUND, tool_call_id="c_x")],
            metadata={"c_x": {APPROVAL_META: {"requestId": named}}},
        )
        assert toolset.request_id(forged, "c_x") is None
        assert await toolset.request(forged, "c_x") is None
        for approved in (True, False):
            with pytest.raises(ApprovalNotFoundError):
                await toolset.answer(forged, {"c_x": approved}, approver="ana")
        assert (await registry.approvals.get_async(named)).status == "pending", "decided by nobody"
    assert "orders.refund" not in agent_caps.CALLS


async def test_a_call_presented_again_after_it_ran_or_was_rejected_elsewhere_is_answered_not_asked_again() -> None:
    registry = build()
    toolset = governed_toolset(registry, ANA)
    call = ToolCallPart("orders_refund", REFUND, tool_call_id="call_r")
    script = Script([call], [TextPart("Refunded.")], [TextPart("Already done.")], [TextPart("Refused.")])
    agent = agent_for(script, toolset)
    first = await agent.run("Refund.")
    assert isinstance(first.output, DeferredToolRequests)
    results = await toolset.answer(first.output, {"call_r": True}, approver="lead")
    assert (await agent.run(message_history=first.all_messages(), deferred_tool_results=results)).output == "Refunded."
    # The history run again without its results (the call shows as
    # undecided): a second request here is one a person could approve,
    # and the refund would run twice. The model reads the core's answer.
    replayed = await agent.run(message_history=first.all_messages())
    assert replayed.output == "Already done."
    content, outcome = script.returns(2)["call_r"]
    assert outcome == "failed" and content.startswith("APPROVAL_CONSUMED: ")
    # A request rejected in an approval UI, its call presented again.
    other = Script([ToolCallPart("orders_refund", {**REFUND, "order": "o-2"}, tool_call_id="call_s")], [TextPart("?")])
    second = await agent_for(other, toolset).run("Refund o-2.")
    assert isinstance(second.output, DeferredToolRequests)
    request = await toolset.request(second.output, "call_s")
    assert request is not None
    await registry.approvals.reject_async(request.id, approver="lead")
    again = Script([TextPart("Refused.")])
    assert (await agent_for(again, toolset).run(message_history=second.all_messages())).output == "Refused."
    content, outcome = again.returns(0)["call_s"]
    assert outcome == "failed" and content.startswith("APPROVAL_REJECTED: ")
    assert agent_caps.CALLS["orders.refund"] == 1
    assert sorted(r.status for r in await registry.approvals.list_async()) == ["consumed", "rejected"]


async def test_results_the_app_builds_itself_are_recorded_as_the_core_s_decision() -> None:
    audit: list[dict[str, Any]] = []
    registry = build(audit.append)
    toolset = governed_toolset(registry, ANA, approver="lead")
    script = Script([ToolCallPart("orders_refund", REFUND, tool_call_id="call_r")], [TextPart("Refunded.")])
    agent = agent_for(script, toolset)
    first = await agent.run("Refund.")
    assert isinstance(first.output, DeferredToolRequests)
    done = await agent.run(
        message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={"call_r": True})
    )
    assert done.output == "Refunded."
    assert agent_caps.CALLS["orders.refund"] == 1
    request = await toolset.request(first.output, "call_r")
    assert request is not None and (request.status, request.decided_by) == ("consumed", "lead")


@pytest.mark.parametrize("configured", [None, ""])
async def test_without_a_configured_approver_the_actor_is_recorded(configured: str | None) -> None:
    # The core's rule (agent_tools::recorded_approver), as in Node: an empty
    # approver names nobody, so the frame's actor is recorded.
    registry = build()
    toolset = governed_toolset(registry, ANA, approver=configured)
    script = Script([ToolCallPart("orders_refund", REFUND, tool_call_id="call_r")], [TextPart("Refunded.")])
    agent = agent_for(script, toolset)
    first = await agent.run("Refund.")
    assert isinstance(first.output, DeferredToolRequests)
    await agent.run(
        message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={"call_r": True})
    )
    request = await toolset.request(first.output, "call_r")
    assert request is not None and (request.status, request.decided_by) == ("consumed", ANA.actor_id)


async def test_a_gated_call_needs_a_caller_the_approval_can_be_kept_for() -> None:
    registry = build()
    toolset = governed_toolset(registry, Frame("aiSdk"))  # no actor id, no session
    script = Script([ToolCallPart("orders_refund", REFUND, tool_call_id="call_r")])
    with pytest.raises(PrincipalRequiredError):
        await agent_for(script, toolset).run("Refund.")
    assert agent_caps.CALLS["orders.refund"] == 0
    assert registry.approvals.list() == []  # the core refused before storing a request


async def test_invalid_arguments_get_the_core_s_text_without_spending_retries() -> None:
    bad = ToolCallPart("orders_get", {"email": 3}, tool_call_id="call_bad")
    script = Script([bad], [bad], [bad], [TextPart("Gave up.")])
    done = await agent_for(script, governed_toolset(build(), ANA)).run("Find.")
    assert done.output == "Gave up."  # three failures, max_retries 0: no UnexpectedModelBehavior
    content, outcome = script.returns(1)["call_bad"]
    assert outcome == "failed" and content.startswith("INVALID_INPUT: ") and "email" in content
