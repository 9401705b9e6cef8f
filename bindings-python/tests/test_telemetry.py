"""OpenTelemetry (issue 20): one span per governed call after the GenAI
conventions for tool execution, with the governance outcome; tested with the
real OpenTelemetry SDK and its in-memory exporters, as the Node suite is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry import context, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from pydantic import BaseModel

import orpc_agent
from orpc_agent import Frame, Telemetry, capability, create_capability_registry

PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class Order(BaseModel):
    id: str


@pytest.fixture
def otel() -> Any:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    yield spans, tracer_provider, reader, meter_provider
    meter_provider.shutdown()
    tracer_provider.shutdown()


def _registry(tracer_provider: Any, meter_provider: Any, records: list[dict[str, Any]], telemetry: bool = True) -> Any:
    inner = tracer_provider.get_tracer("the-app")

    @capability(
        id="orders.lookup",
        description="Look up an order.",
        expose={"mcp": True, "aiSdk": True},
        side_effect="read",
        risk="low",
    )
    async def lookup(o: Order) -> dict[str, str]:
        # The handler's own span is a child of the governed call's.
        with inner.start_as_current_span("db.query"):
            return {"id": o.id, "card": "4111 1111 1111 1111"}

    @capability(
        id="orders.cancel",
        description="Cancel an order.",
        expose={"mcp": True},
        side_effect="write",
        risk="medium",
        policies=[{"name": "no-guests", "when": {"actorRole": ["guest"]}, "decision": "deny"}],
        approval={"required": True},
    )
    async def cancel(o: Order) -> dict[str, str]:
        return {"cancelled": o.id}

    return create_capability_registry(
        [lookup, cancel],
        audit=records.append,
        telemetry=Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider) if telemetry else None,
    )


async def test_an_ok_call_is_one_execute_tool_span_whose_ids_the_audit_record_carries(otel: Any) -> None:
    spans, tracer_provider, _, meter_provider = otel
    records: list[dict[str, Any]] = []
    reg = _registry(tracer_provider, meter_provider, records)
    out = await reg.invoke(
        "orders_lookup",
        {"id": "o-1"},
        Frame("aiSdk", actor={"id": "ann"}, request_id="call_7", traceparent=PARENT),
    )
    assert out.output["id"] == "o-1"  # type: ignore[union-attr]
    [span] = [s for s in spans.get_finished_spans() if s.name == "execute_tool orders_lookup"]
    sc = span.get_span_context()
    assert f"{sc.trace_id:032x}" == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert span.parent is not None and f"{span.parent.span_id:016x}" == "00f067aa0ba902b7"
    [finished] = [r for r in records if r["event"] == "finished"]
    assert finished["traceparent"] == f"00-{sc.trace_id:032x}-{sc.span_id:016x}-01"
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "orders_lookup",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_7",
        "orpc_agent.capability.id": "orders.lookup",
        "orpc_agent.surface": "aiSdk",
        "orpc_agent.outcome": "ok",
        "orpc_agent.stage": "finished",
        "orpc_agent.attempts": 1,
        "orpc_agent.resumed": False,
        "orpc_agent.request.id": "call_7",
    }
    assert span.status.status_code == StatusCode.UNSET
    assert "4111" not in repr(span.attributes) and "o-1" not in repr(span.attributes)
    [db] = [s for s in spans.get_finished_spans() if s.name == "db.query"]
    assert db.parent is not None and db.parent.span_id == sc.span_id


async def test_without_a_frame_trace_the_parent_is_the_active_span(otel: Any) -> None:
    spans, tracer_provider, _, meter_provider = otel
    reg = _registry(tracer_provider, meter_provider, [])
    app = tracer_provider.get_tracer("the-app").start_span("http.request")
    token = context.attach(trace.set_span_in_context(app))
    try:
        await reg.invoke("orders.lookup", {"id": "o-2"}, Frame("mcp"))
    finally:
        context.detach(token)
        app.end()
    [span] = [s for s in spans.get_finished_spans() if s.name == "execute_tool orders.lookup"]
    assert span.parent is not None and span.parent.span_id == app.get_span_context().span_id
    assert span.get_span_context().trace_id == app.get_span_context().trace_id


async def test_denied_pending_and_resumed_calls_carry_the_governance_outcome(otel: Any) -> None:
    spans, tracer_provider, reader, meter_provider = otel
    reg = _registry(tracer_provider, meter_provider, [])
    with pytest.raises(orpc_agent.PolicyDeniedError):
        await reg.invoke("orders.cancel", {"id": "o-3"}, Frame("mcp", actor={"id": "g", "roles": ["guest"]}))
    [denied] = spans.get_finished_spans()
    assert denied.status.status_code == StatusCode.ERROR
    assert denied.status.description == "POLICY_DENIED"
    assert denied.attributes is not None
    assert denied.attributes["error.type"] == "POLICY_DENIED"
    assert denied.attributes["orpc_agent.policy.decision"] == "deny"
    assert denied.attributes["orpc_agent.policy.name"] == "no-guests"

    spans.clear()
    made = await reg.invoke("orders.cancel", {"id": "o-4"}, Frame("mcp", actor={"id": "ann"}))
    assert isinstance(made, orpc_agent.ApprovalRequired)
    [pending] = spans.get_finished_spans()
    assert pending.status.status_code == StatusCode.UNSET
    assert pending.attributes is not None
    assert pending.attributes["orpc_agent.approval.state"] == "pending"
    assert pending.attributes["orpc_agent.approval.id"] == made.request.id

    reg.approvals.approve(made.request.id, approver="bob")
    spans.clear()
    await reg.resume(made.request.id)
    [resumed] = spans.get_finished_spans()
    assert resumed.name == "execute_tool orders.cancel"
    assert resumed.attributes is not None
    assert resumed.attributes["orpc_agent.resumed"] is True
    assert resumed.attributes["orpc_agent.approval.state"] == "consumed"

    data = reader.get_metrics_data()
    [scope] = [s for rm in data.resource_metrics for s in rm.scope_metrics if s.scope.name == "orpc-agent"]
    metrics = {m.name: m for m in scope.metrics}
    calls = sorted(
        (p.attributes["orpc_agent.capability.id"], p.attributes["orpc_agent.outcome"], p.value)
        for p in metrics["orpc_agent.calls"].data.data_points
    )
    assert calls == [
        ("orders.cancel", "POLICY_DENIED", 1),
        ("orders.cancel", "approval_required", 1),
        ("orders.cancel", "ok", 1),
    ]
    assert metrics["orpc_agent.call.duration"].unit == "s"
    assert sum(p.count for p in metrics["orpc_agent.call.duration"].data.data_points) == 3


async def test_payloads_opt_in_puts_the_redacted_output_on_the_span_and_never_the_input(otel: Any) -> None:
    spans, tracer_provider, _, _ = otel
    records: list[dict[str, Any]] = []

    def mask(out: dict[str, str]) -> dict[str, str]:
        return {**out, "number": "**** 1111"}

    @capability(
        id="cards.show",
        description="Show a card.",
        expose={"mcp": True},
        side_effect="read",
        risk="low",
        redact_output=mask,
    )
    async def show(o: Order) -> dict[str, str]:
        return {"holder": o.id, "number": "4111 1111 1111 1111"}

    reg = create_capability_registry(
        [show], audit=records.append, telemetry=Telemetry(tracer_provider=tracer_provider, payloads=True)
    )
    out = await reg.invoke("cards.show", {"id": "Ann Example"}, Frame("mcp"))
    assert out.status == "ok"
    [span] = spans.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert json.loads(attributes["gen_ai.tool.call.result"]) == {"holder": "Ann Example", "number": "**** 1111"}
    assert "gen_ai.tool.call.arguments" not in attributes
    assert "4111" not in repr(attributes)
    [finished] = [r for r in records if r["event"] == "finished"]
    assert "output" not in finished, "audit payloads were not asked for"
    with pytest.raises(TypeError, match="payloads"):
        Telemetry(payloads="yes")  # type: ignore[arg-type]


async def test_with_telemetry_the_recorded_tracestate_is_the_one_the_core_kept_as_without(otel: Any) -> None:
    """The SDK's own parse drops a state with a member it does not read (a
    key that starts with a digit); the audit record carries the core's."""
    _, tracer_provider, _, meter_provider = otel
    records: list[dict[str, Any]] = []
    plain_records: list[dict[str, Any]] = []
    reg = _registry(tracer_provider, meter_provider, records)
    plain = _registry(tracer_provider, meter_provider, plain_records, telemetry=False)
    long = ",".join(f"key{i}=" + "v" * 20 for i in range(30))
    for tracestate in ["a=1,1special=2", "a=1,foo@@bar=2", long]:
        records.clear()
        plain_records.clear()
        frame = Frame("aiSdk", actor={"id": "ann"}, traceparent=PARENT, tracestate=tracestate)
        await reg.invoke("orders_lookup", {"id": "o-1"}, frame)
        await plain.invoke("orders_lookup", {"id": "o-1"}, frame)
        kept = next(r for r in plain_records if r["event"] == "finished")["tracestate"]
        assert kept, tracestate
        assert next(r for r in records if r["event"] == "finished")["tracestate"] == kept, tracestate
