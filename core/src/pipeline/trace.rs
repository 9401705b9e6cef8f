//! Stage 3: freezing the frame's trace context.
//!
//! W3C Trace Context says a receiver that cannot parse `traceparent` must
//! ignore it (and then `tracestate` too), not fail the request. The core
//! does the same: an invalid `traceparent` drops the whole trace context
//! (the call proceeds, the audit record shows `traceparent: null`); a valid
//! `traceparent` with an invalid `tracestate` keeps the former and drops
//! the latter. The rules are the std-keys ones of [`crate::act::trace`].

use crate::act::trace::sanitize;
use crate::frame::TraceContext;

/// The trace context the invocation keeps.
pub fn freeze_trace(trace: Option<TraceContext>) -> Option<TraceContext> {
    let t = trace?;
    sanitize(Some(&t.traceparent), t.tracestate.as_deref())
        .ok()
        .flatten()
}
