//! Stage 3: freezing the frame's trace context.
//!
//! W3C Trace Context says a receiver that cannot parse `traceparent` must
//! ignore it (and then `tracestate` too), not fail the request. The core
//! does the same: an invalid `traceparent` drops the whole trace context
//! (the call proceeds, the audit record shows `traceparent: null`); a valid
//! `traceparent` with an invalid `tracestate` keeps the former and drops
//! the latter. Validation uses the std-keys rules of [`crate::act`].

use crate::frame::TraceContext;

/// The trace context the invocation keeps.
pub fn freeze_trace(trace: Option<TraceContext>) -> Option<TraceContext> {
    let mut t = trace?;
    if !valid_traceparent(&t.traceparent) {
        return None;
    }
    if let Some(ts) = &t.tracestate
        && !valid_tracestate(ts)
    {
        t.tracestate = None;
    }
    Some(t)
}

// Until `crate::act::validate_traceparent`/`validate_tracestate` land
// (issue 3), the W3C shapes checked minimally here.
fn valid_traceparent(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let hex = |p: &str, n: usize| {
        p.len() == n && p.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    parts.len() == 4
        && hex(parts[0], 2)
        && parts[0] != "ff"
        && hex(parts[1], 32)
        && parts[1].bytes().any(|b| b != b'0')
        && hex(parts[2], 16)
        && parts[2].bytes().any(|b| b != b'0')
        && hex(parts[3], 2)
}

fn valid_tracestate(s: &str) -> bool {
    s.len() <= 512 && s.split(',').all(|m| m.trim().is_empty() || m.contains('='))
}
