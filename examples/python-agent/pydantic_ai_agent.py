"""End to end with PydanticAI: server.py's capabilities as a governed
toolset (surface aiSdk) driven by PydanticAI's offline FunctionModel, which
plays the model turn by turn. The read runs (card masked), the delete is
refused by a policy, the refund waits for a manager; an approver process (a
second registry on the same SQLite file) approves it, the run goes on and
the refund runs once; running the same answer again is refused by the core.
`make demo` runs this."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server import delete, get_order, refund  # noqa: E402

from orpc_agent import Frame, create_capability_registry  # noqa: E402
from orpc_agent.pydantic_ai import governed_toolset  # noqa: E402

ANA = Frame("aiSdk", actor={"id": "ana", "roles": ["support"]}, session_id="chat-1")


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Stands in for a real model: calls three tools, then reports what it read."""
    last = messages[-1]
    returns = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
    if not returns:
        return ModelResponse(
            parts=[
                ToolCallPart("orders_get", {"order_id": "o-1"}, tool_call_id="call_get"),
                ToolCallPart("orders_delete", {"order_id": "o-1"}, tool_call_id="call_delete"),
                ToolCallPart("orders_refund", {"order_id": "o-1", "amount": 30.0}, tool_call_id="call_refund"),
            ]
        )
    for part in returns:
        print(f"== model reads {part.tool_name} [{part.outcome}]: {part.content}")
    return ModelResponse(parts=[TextPart("Done.")])


def registry_on(db: str) -> Any:
    return create_capability_registry(
        [get_order, refund, delete],
        approval_store={"sqlite": db},
        audit=lambda r: print(f"audit: {r['capabilityId']} -> {r['outcome']}") if r["event"] == "finished" else None,
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "approvals.db")
        agent = Agent(FunctionModel(model), output_type=[str, DeferredToolRequests])
        toolset = governed_toolset(registry_on(db), ANA)
        first = await agent.run("Ana wants 30 back on o-1, and the order deleted.", toolsets=[toolset])
        requests = first.output
        assert isinstance(requests, DeferredToolRequests)
        print(f"== waiting for a human: {[c.tool_name for c in requests.approvals]}")

        # The approver's process: its own registry on the same store.
        approver = governed_toolset(registry_on(db), ANA)
        results = await approver.answer(requests, {"call_refund": True}, approver="manager-1")
        print("== manager-1 approved the refund")
        done = await agent.run(message_history=first.all_messages(), deferred_tool_results=results, toolsets=[approver])
        print(f"== run output: {done.output}")

        print("== the same answer run again:")
        await agent.run(message_history=first.all_messages(), deferred_tool_results=results, toolsets=[approver])


if __name__ == "__main__":
    asyncio.run(main())
