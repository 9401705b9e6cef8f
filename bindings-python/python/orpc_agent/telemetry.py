"""OpenTelemetry for governed calls: ``create_capability_registry(...,
telemetry=Telemetry())``.

One span per governed call, a call counter and a duration histogram,
through ``opentelemetry-api`` (the ``otel`` extra). The span's name and
attributes — the GenAI conventions for tool execution (``execute_tool
<name>``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``error.type``)
and the governance outcome as ``orpc_agent.*`` attributes, never a payload —
are the core's (``orpc_agent_core::telemetry``), computed from the call's
finished audit record. This module starts the span (child of the frame's
``traceparent`` when the core keeps it, else of the active span), makes it
the trace the core records (the audit record's ``traceparent`` names this
span) and the active span while the call runs, and hands the core's view
to the API.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any

from . import _native
from .errors import CapabilityError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

__all__ = ["Telemetry"]

_NAMES = _native.telemetry_names()


class _CallSpan:
    __slots__ = ("_span", "_telemetry", "ended")

    def __init__(self, telemetry: Telemetry, span: Any) -> None:
        self._telemetry = telemetry
        self._span = span
        self.ended = False

    def finish(self, view: dict[str, Any]) -> None:
        if self.ended:
            return
        self.ended = True
        t = self._telemetry
        # Telemetry is a report, never a gate: what the OpenTelemetry SDK (or
        # an app's span processor) raises changes nothing about the call, and
        # the span is ended whatever a step before it raised (as in Node).
        try:
            try:
                self._span.update_name(view["spanName"])
                self._span.set_attributes(view["attributes"])
                if view["error"] is not None:
                    self._span.set_status(t._status(t._status_code.ERROR, view["error"]))
            finally:
                self._span.end()
            t._calls.add(1, view["metricAttributes"])
            t._duration.record(view["durationS"], view["metricAttributes"])
        except Exception:  # noqa: BLE001, S110 - see above
            pass

    def end_with_error(self, code: str) -> None:
        """Ends a span with no finished record to report (the core never
        started the call), only the error's code."""
        if self.ended:
            return
        self.ended = True
        t = self._telemetry
        try:
            try:
                self._span.set_attribute("error.type", code)
                self._span.set_status(t._status(t._status_code.ERROR, code))
            finally:
                self._span.end()
        except Exception:  # noqa: BLE001, S110 - a report, never a gate
            pass


#: The span of the call running in this context (read when its finished
#: record is delivered, inside that call).
_CURRENT: contextvars.ContextVar[_CallSpan | None] = contextvars.ContextVar("orpc_agent_call_span", default=None)


class Telemetry:
    """Where a registry's spans and metrics go: the given providers, else
    the globally registered ones (``opentelemetry.trace`` /
    ``opentelemetry.metrics``). ``payloads=True`` puts each call's output,
    as the capability's ``redact_output`` hook left it, on its span."""

    def __init__(self, *, tracer_provider: Any = None, meter_provider: Any = None, payloads: bool = False) -> None:
        try:
            from opentelemetry import context, metrics, trace
            from opentelemetry.trace import Status, StatusCode
        except ImportError as e:  # pragma: no cover - exercised without the extra
            raise ImportError("orpc_agent.Telemetry needs opentelemetry-api: pip install 'orpc-agent[otel]'") from e
        if not isinstance(payloads, bool):
            raise TypeError(f"Telemetry(payloads=...) must be a bool, got {type(payloads).__name__}")
        #: Spans carry the call's output as the capability's ``redact_output``
        #: hook left it (``gen_ai.tool.call.result``, JSON text); never the input.
        self.payloads = payloads
        self._trace = trace
        self._context = context
        self._status = Status
        self._status_code = StatusCode
        self._tracer = trace.get_tracer(_NAMES["scopeName"], tracer_provider=tracer_provider)
        meter = metrics.get_meter(_NAMES["scopeName"], meter_provider=meter_provider)
        self._calls = meter.create_counter(
            _NAMES["callsMetric"], description="Governed capability calls, by capability, surface and outcome."
        )
        self._duration = meter.create_histogram(
            _NAMES["durationMetric"], unit="s", description="Duration of governed capability calls."
        )

    def _finished(self, view: dict[str, Any]) -> None:
        """The native registry's hook: the core's view of a finished call."""
        call = _CURRENT.get()
        if call is not None:
            call.finish(view)

    async def _around(self, frame: _native.Frame, run: Callable[[_native.Frame], Awaitable[Any]]) -> Any:
        """Runs one call (``run`` with the frame the core gets) in its span."""
        trace = self._trace
        parent = self._context.get_current()
        if frame.traceparent is not None:
            p = _native.telemetry_span_parent(frame.traceparent, frame.tracestate)
            if p is not None:
                state = trace.TraceState.from_header([p["tracestate"]]) if p["tracestate"] else None
                remote = trace.SpanContext(
                    int(p["traceId"], 16),
                    int(p["spanId"], 16),
                    is_remote=True,
                    trace_flags=trace.TraceFlags(p["traceFlags"]),
                    trace_state=state,
                )
                parent = trace.set_span_in_context(trace.NonRecordingSpan(remote), parent)
        span = self._tracer.start_span(
            "execute_tool",
            context=parent,
            kind=trace.SpanKind.INTERNAL,
            attributes={"gen_ai.operation.name": "execute_tool"},
        )
        sc = span.get_span_context()
        if sc.is_valid:
            # The span's context as the core records it (``telemetry::recorded_trace``:
            # the trace state the core kept when the span continues the frame's).
            traceparent, tracestate = _native.telemetry_recorded_trace(
                frame.traceparent,
                frame.tracestate,
                f"{sc.trace_id:032x}",
                f"{sc.span_id:016x}",
                int(sc.trace_flags),
                sc.trace_state.to_header() if sc.trace_state else None,
            )
            frame = _native.Frame(
                frame.surface,
                actor=frame.actor,
                traceparent=traceparent,
                tracestate=tracestate,
                request_id=frame.request_id,
                agent_id=frame.agent_id,
                session_id=frame.session_id,
                context=frame.context,
            )
        call = _CallSpan(self, span)
        token = _CURRENT.set(call)
        attached = self._context.attach(trace.set_span_in_context(span, parent))
        try:
            return await run(frame)
        except BaseException as e:
            # A capability error's code; anything else INTERNAL (as in Node).
            call.end_with_error(e.code if isinstance(e, CapabilityError) else "INTERNAL")
            raise
        finally:
            self._context.detach(attached)
            _CURRENT.reset(token)
