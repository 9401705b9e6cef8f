//! OpenTelemetry's view of a governed call (`orpc_agent_core::telemetry`):
//! the façade's `telemetry.ts` hands these to `@opentelemetry/api`.

use napi_derive::napi;
use orpc_agent_core::TraceContext;
use orpc_agent_core::pipeline::Step;
use orpc_agent_core::telemetry::{call_telemetry, recorded_trace, span_parent};

use crate::registry::with_registry;

/// At an `Audit` step whose record is the finished one: the call's span
/// name, attributes, error and metric attributes as JSON; else null.
#[napi(catch_unwind)]
pub fn invoke_telemetry(reg: u32, h: u32) -> Option<String> {
    with_registry(reg, |r| {
        Ok(r.invocations.get(h).and_then(|inv| match inv.step() {
            Step::Audit(record) => {
                call_telemetry(record).and_then(|t| serde_json::to_string(&t).ok())
            }
            _ => None,
        }))
    })
    .unwrap_or(None)
}

/// The span parent a frame's trace context names (`{traceId, spanId,
/// traceFlags, tracestate}` JSON), or null when the core would not keep it.
#[napi(catch_unwind)]
pub fn telemetry_span_parent(traceparent: String, tracestate: Option<String>) -> Option<String> {
    span_parent(&traceparent, tracestate.as_deref()).and_then(|p| serde_json::to_string(&p).ok())
}

/// The trace context the audit record carries for the call's span
/// (`telemetry::recorded_trace`): `{traceparent, tracestate?}` JSON.
#[napi(catch_unwind)]
pub fn telemetry_recorded_trace(
    frame_traceparent: Option<String>,
    frame_tracestate: Option<String>,
    trace_id: String,
    span_id: String,
    trace_flags: u32,
    span_tracestate: Option<String>,
) -> String {
    let frame = frame_traceparent.map(|traceparent| TraceContext {
        traceparent,
        tracestate: frame_tracestate,
    });
    let flags = u8::try_from(trace_flags & 0xff).unwrap_or_default();
    let t = recorded_trace(
        frame.as_ref(),
        &trace_id,
        &span_id,
        flags,
        span_tracestate.as_deref(),
    );
    serde_json::to_string(&t).unwrap_or_default()
}

/// The names the façade needs: `{scopeName, callsMetric, durationMetric}`.
#[napi]
pub fn telemetry_names() -> String {
    use orpc_agent_core::telemetry::{CALLS_METRIC, DURATION_METRIC, SCOPE_NAME};
    serde_json::json!({
        "scopeName": SCOPE_NAME,
        "callsMetric": CALLS_METRIC,
        "durationMetric": DURATION_METRIC,
    })
    .to_string()
}
