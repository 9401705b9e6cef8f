//! OpenTelemetry's view of a governed call (`orpc_agent_core::telemetry`):
//! `orpc_agent/telemetry.py` hands these to `opentelemetry-api`.

use orpc_agent_core::TraceContext;
use orpc_agent_core::telemetry::{
    CALLS_METRIC, DURATION_METRIC, SCOPE_NAME, recorded_trace, span_parent,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The span parent a frame's trace context names (`{traceId, spanId,
/// traceFlags, tracestate}`), or `None` when the core would not keep it.
#[pyfunction]
#[pyo3(signature = (traceparent, tracestate = None))]
pub fn telemetry_span_parent<'py>(
    py: Python<'py>,
    traceparent: &str,
    tracestate: Option<&str>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    span_parent(traceparent, tracestate)
        .map(|p| pythonize::pythonize(py, &p).map_err(PyErr::from))
        .transpose()
}

/// The trace context the audit record carries for the call's span
/// (`telemetry::recorded_trace`): `(traceparent, tracestate)`.
#[pyfunction]
#[pyo3(signature = (frame_traceparent, frame_tracestate, trace_id, span_id, trace_flags, span_tracestate))]
pub fn telemetry_recorded_trace(
    frame_traceparent: Option<String>,
    frame_tracestate: Option<String>,
    trace_id: &str,
    span_id: &str,
    trace_flags: u8,
    span_tracestate: Option<&str>,
) -> (String, Option<String>) {
    let frame = frame_traceparent.map(|traceparent| TraceContext {
        traceparent,
        tracestate: frame_tracestate,
    });
    let t = recorded_trace(
        frame.as_ref(),
        trace_id,
        span_id,
        trace_flags,
        span_tracestate,
    );
    (t.traceparent, t.tracestate)
}

/// `{scopeName, callsMetric, durationMetric}`.
#[pyfunction]
pub fn telemetry_names(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("scopeName", SCOPE_NAME)?;
    d.set_item("callsMetric", CALLS_METRIC)?;
    d.set_item("durationMetric", DURATION_METRIC)?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(telemetry_span_parent, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry_recorded_trace, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry_names, m)?)?;
    Ok(())
}
