"""tests/vectors/agents/openai.json: the same capabilities and scripted model
turns give the same tool outputs through this adapter as through Node's
(bindings-node/test/adapters/vectors-openai-agents.test.mjs), driven by the
SDK's own offline model (``agents.testing.ScriptedModel``) and ``Runner``.
Approval ids are numbered in order of appearance; everything else is
compared exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from orpc_agent import Frame, create_capability_registry, define_capability
from orpc_agent.openai_agents import governed_tools
from test_vectors import MiniSchema, _handler, _policy

set_tracing_disabled(True)

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors" / "agents"
CASES = json.loads((VECTORS / "openai.json").read_text())["cases"]
APPROVAL_ID = re.compile(r"apr_[0-9a-f]{32}")


def _turn(items: list[dict[str, Any]]) -> list[Any]:
    """A scripted turn's items as the SDK's own helpers make them."""
    return [
        assistant_message(i["message"])
        if "message" in i
        else function_call(i["tool"], i["arguments"], call_id=i["callId"])
        for i in items
    ]


def _sent(model: ScriptedModel) -> dict[str, dict[str, str]]:
    """What the model was sent of each tool call, by call id, at each model
    call that carried any; approval ids numbered in order of appearance."""
    ids: dict[str, str] = {}
    sent: dict[str, dict[str, str]] = {}
    for index, call in enumerate(model.calls):
        items = call.input if isinstance(call.input, list) else []
        outputs = {
            i["call_id"]: APPROVAL_ID.sub(
                lambda m: ids.setdefault(m.group(0), f"<approval-{len(ids) + 1}>"), i["output"]
            )
            for i in items
            if isinstance(i, dict) and i.get("type") == "function_call_output"
        }
        if outputs:
            sent[str(index)] = outputs
    return sent


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
async def test_openai_agents_vector(case: dict[str, Any]) -> None:
    calls: dict[str, int] = {}
    named = {name: _policy(p) for name, p in (case.get("hostPolicies") or {}).items()}
    specs = [
        define_capability(
            _handler(cap_id, c["handler"], calls),
            id=cap_id,
            meta=c["meta"],
            input=MiniSchema(c["inputSchema"]) if "inputSchema" in c else None,
            host_policies=named,
        )
        for cap_id, c in case["capabilities"].items()
    ]
    registry = create_capability_registry(specs, options=case.get("options") or {}, host_policies=named)
    f = case["frame"]
    tools = governed_tools(registry, Frame("direct", actor=f.get("actor"), session_id=f.get("sessionId")))
    model = ScriptedModel([_turn(t) for t in case["model"]])
    agent = Agent(name="vectors", model=model, tools=tools)
    state: Any = None  # the last run's state, decided in place
    for i, step in enumerate(case["steps"]):
        where = f"{case['name']}: step {i}"
        if "approve" in step or "reject" in step:
            for item in state.get_interruptions():
                if "approve" in step:
                    await tools.approve(state, item, **step["approve"])
                else:
                    await tools.reject(state, item, **step["reject"])
            continue
        last = await Runner.run(agent, step["run"] if "run" in step else state)
        state = last.to_state()
        assert [item.tool_name for item in last.interruptions] == step["expect"]["interruptions"], where
        if "finalOutput" in step["expect"]:
            assert last.final_output == step["expect"]["finalOutput"], where
    sent = _sent(model)
    assert sent == case["sent"], f"{case['name']}: what the model was sent"
    if "mustNotContain" in case:
        assert case["mustNotContain"] not in json.dumps(sent), case["name"]
    for cap_id, n in (case.get("handlerCalls") or {}).items():
        assert calls.get(cap_id, 0) == n, f"{case['name']}: {cap_id}"
