//! Exports for the agent gateway and for progress (issue 9): descriptors as
//! CBOR with `std:` keys, the W3C trace context read from HTTP headers, and
//! the core's progress check. Conversions only; the rules are the core's
//! (`ffi::act::descriptors_cbor`, `act::trace`, `pipeline::progress`).

use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use orpc_agent_core::act::trace;
use orpc_agent_core::pipeline::progress::{self, ProgressEvent};

use crate::errors::{internal, invalid, throw};
use crate::registry::registry_call;

/// The descriptors exposed on `surface` as one CBOR array
/// (`ffi::act::descriptors_cbor`: each item the JSON fields plus a
/// `metadata` map of `std:` keys).
#[napi(catch_unwind)]
pub fn registry_descriptors_cbor(reg: u32, surface: String) -> napi::Result<Buffer> {
    registry_call(reg, |r| {
        orpc_agent_core::ffi::act::descriptors_cbor(r.host.registry(), &surface).map(Buffer::from)
    })
}

/// The trace context of an HTTP request's headers (`[name, value, name,
/// value, …]`), as `{"traceparent", "tracestate"?}` JSON, or `null` when
/// absent or invalid (an invalid context is dropped, never fatal).
#[napi(catch_unwind)]
pub fn trace_from_http_headers(pairs: Vec<String>) -> Option<String> {
    let headers = pairs
        .chunks_exact(2)
        .map(|p| (p[0].as_str(), p[1].as_str()));
    match trace::from_http_headers(headers) {
        Ok(Some(tc)) => serde_json::to_string(&tc).ok(),
        _ => None,
    }
}

/// The headers to send for a trace context (`[name, value, …]`).
#[napi(catch_unwind)]
pub fn trace_to_http_headers(traceparent: String, tracestate: Option<String>) -> Vec<String> {
    let tc = orpc_agent_core::TraceContext {
        traceparent,
        tracestate,
    };
    trace::to_http_headers(&tc)
        .into_iter()
        .flat_map(|(k, v)| [k.to_owned(), v])
        .collect()
}

/// Checks one progress report against the last accepted one (`lastDone`
/// absent: none yet; `lastTotal` absent: no total). Returns the total in
/// force for an accepted report (carried forward; NaN when there is none)
/// or `-code` (`ProgressError::code`) for a dropped one: one number, no
/// object per report, exact up to the core's largest count (2^53).
#[napi(catch_unwind)]
pub fn progress_check(
    last_done: Option<f64>,
    last_total: Option<f64>,
    done: f64,
    total: Option<f64>,
) -> f64 {
    let count = progress::count_from_f64;
    let result = (|| {
        let last = match last_done {
            Some(done) => Some(ProgressEvent {
                done: count(done)?,
                total: last_total.map(count).transpose()?,
            }),
            None => None,
        };
        progress::check(last, count(done)?, total.map(count).transpose()?)
    })();
    match result {
        #[allow(clippy::cast_precision_loss)] // at most 2^53: exact
        Ok(ProgressEvent { total, .. }) => total.map_or(f64::NAN, |t| t as f64),
        Err(e) => -f64::from(e.code()),
    }
}

/// A progress event as deterministic CBOR content-part metadata
/// (`std:progress`, `std:progress-total`), for an event the core would
/// accept as a first report (counts, `done <= total`).
#[napi(catch_unwind)]
pub fn progress_metadata_cbor(done: f64, total: Option<f64>) -> napi::Result<Buffer> {
    let err = |e: progress::ProgressError| throw(&invalid(e.to_string()));
    let count = progress::count_from_f64;
    let event = progress::check(
        None,
        count(done).map_err(err)?,
        total.map(count).transpose().map_err(err)?,
    )
    .map_err(err)?;
    event
        .to_cbor()
        .map(Buffer::from)
        .map_err(|e| throw(&internal(&e.to_string())))
}
