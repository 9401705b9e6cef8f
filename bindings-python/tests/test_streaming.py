"""Streaming handlers (issue 20.2), as in Node: an ``async def`` with
``yield``. Each yielded value is a progress report; the last one is the
output, validated, redacted and audited like any output; the deadline and
the caller's cancellation stop the generator. Driven through ``invoke`` and
a real mcp ``Client`` (progress notifications)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client
from pydantic import BaseModel

import orpc_agent
from orpc_agent import Frame, ProgressEvent, capability, create_capability_registry, on_progress
from orpc_agent.mcp import create_mcp_server

DIRECT = Frame("direct")


class Count(BaseModel):
    n: int


class Total(BaseModel):
    total: int
    secret: str


class Empty(BaseModel):
    pass


def _finished(audit: list[dict[str, Any]], capability_id: str) -> list[str]:
    return [r["outcome"] for r in audit if r["event"] == "finished" and r["capabilityId"] == capability_id]


@capability(
    id="s.count",
    description="Counts.",
    expose={"direct": True, "mcp": True},
    side_effect="read",
    risk="low",
    redact_output=lambda o: o.model_copy(update={"secret": "[redacted]"}),
)
async def count(c: Count) -> AsyncIterator[Total]:
    for i in range(1, c.n + 1):
        await asyncio.sleep(0)
        yield Total(total=i, secret="s3cr3t")


@capability(id="s.bad", description="Bad.", expose={"direct": True}, side_effect="read", risk="low")
async def bad(e: Empty) -> AsyncIterator[Total]:
    yield {"total": "many", "secret": "x"}  # type: ignore[misc]


@capability(id="s.fails", description="Fails.", expose={"direct": True}, side_effect="read", risk="low")
async def fails(e: Empty) -> AsyncIterator[int]:
    yield 1
    raise RuntimeError("card 4111 1111 1111 1111 declined")


class Tracker:
    def __init__(self) -> None:
        self.yields = 0
        self.entered = asyncio.Event()
        self.stopped = asyncio.Event()

    def endless(self) -> Any:
        async def run(e: Empty) -> AsyncIterator[int]:
            try:
                self.entered.set()
                while True:
                    await asyncio.sleep(0.005)
                    self.yields += 1
                    yield self.yields
            finally:
                self.stopped.set()

        return run


async def test_each_yield_is_progress_and_the_last_is_the_output_validated_and_redacted() -> None:
    audit: list[dict[str, Any]] = []
    reg = create_capability_registry([count], audit=audit.append)
    events: list[ProgressEvent] = []
    with on_progress(events.append):
        out = await reg.invoke("s.count", {"n": 3}, DIRECT)
    assert out.status == "ok"
    assert out.output == Total(total=3, secret="[redacted]")
    assert events == [ProgressEvent(1), ProgressEvent(2), ProgressEvent(3)]
    assert _finished(audit, "s.count") == ["ok"]
    (d,) = [d for d in reg.descriptors(surface="direct") if d["id"] == "s.count"]
    assert sorted(d["outputSchema"]["properties"]) == ["secret", "total"]


async def test_an_invalid_last_value_is_output_invalid_and_a_raise_mid_stream_is_execution_failed() -> None:
    audit: list[dict[str, Any]] = []
    reg = create_capability_registry([bad, fails], audit=audit.append)
    with pytest.raises(orpc_agent.CapabilityError) as invalid:
        await reg.invoke("s.bad", {}, DIRECT)
    assert invalid.value.code == "OUTPUT_INVALID"
    with pytest.raises(orpc_agent.CapabilityError) as failed:
        await reg.invoke("s.fails", {}, DIRECT)
    assert failed.value.code == "EXECUTION_FAILED"
    assert "4111" not in failed.value.message
    assert _finished(audit, "s.bad") == ["OUTPUT_INVALID"]
    assert _finished(audit, "s.fails") == ["EXECUTION_FAILED"]


async def test_the_deadline_ends_the_call_timeout_and_stops_the_generator() -> None:
    t = Tracker()
    slow = capability(
        id="s.slow", description="S.", expose={"direct": True}, side_effect="read", risk="low", timeout_ms=400
    )(t.endless())  # a deadline a loaded machine still starts the generator before
    audit: list[dict[str, Any]] = []
    reg = create_capability_registry([slow], audit=audit.append)
    with pytest.raises(orpc_agent.TimeoutCapabilityError):
        await asyncio.wait_for(reg.invoke("s.slow", {}, DIRECT), 10)
    await asyncio.wait_for(t.stopped.wait(), 10)  # its finally ran
    made = t.yields
    await asyncio.sleep(0.03)
    assert t.yields == made, "no value is made after the stop"
    assert _finished(audit, "s.slow") == ["TIMEOUT"]


async def test_the_callers_cancellation_is_cancelled_and_stops_the_generator() -> None:
    t = Tracker()
    endless = capability(id="s.endless", description="E.", expose={"direct": True}, side_effect="read", risk="low")(
        t.endless()
    )
    audit: list[dict[str, Any]] = []
    reg = create_capability_registry([endless], audit=audit.append)
    task = asyncio.ensure_future(reg.invoke("s.endless", {}, DIRECT))
    await asyncio.wait_for(t.entered.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(t.stopped.wait(), 10)
    assert _finished(audit, "s.endless") == ["CANCELLED"]


async def test_a_real_mcp_client_with_a_progress_token_gets_one_notification_per_yield() -> None:
    server = create_mcp_server(create_capability_registry([count]))
    received: list[float] = []

    async def on_notification(progress: float, total: float | None, message: str | None) -> None:
        received.append(progress)

    async with Client(server) as client:
        result = await client.call_tool("s_count", {"n": 3}, progress_callback=on_notification)
    assert result.is_error is False
    assert result.structured_content == {"total": 3, "secret": "[redacted]"}
    assert received == [1, 2, 3]


async def test_a_decorated_streaming_handler_is_a_stream() -> None:
    import functools

    def logged(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any) -> Any:
            return fn(*args)

        return wrapper

    @capability(id="s.wrapped", description="W.", expose={"direct": True}, side_effect="read", risk="low")
    @logged
    async def wrapped(c: Count) -> AsyncIterator[int]:
        for i in range(1, c.n + 1):
            yield i

    reg = create_capability_registry([wrapped])
    events: list[ProgressEvent] = []
    with on_progress(events.append):
        out = await reg.invoke("s.wrapped", {"n": 2}, DIRECT)
    assert out.output == 2
    assert events == [ProgressEvent(1), ProgressEvent(2)]
