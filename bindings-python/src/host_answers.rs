//! A host's answers read from Python values: a progress count and a
//! policy decision's fields. A value of the wrong type is no answer at all
//! (a dropped report, a failed policy), never a default in its place; what
//! the values mean is the core's (`ffi::policy_answer`).

use orpc_agent_core::ffi;
use orpc_agent_core::pipeline::Answer;
use orpc_agent_core::pipeline::progress;
use pyo3::prelude::*;
use pyo3::types::PyBool;

/// A count a host reported (progress): an `int` that fits a `u64`, or a
/// `float` the core reads as a count (`2.0`, as a JavaScript or Swift
/// number would be), never a `bool`. How large a count may be is the
/// core's rule (`pipeline::progress::check`).
pub(crate) fn count(v: &Bound<'_, PyAny>) -> Option<u64> {
    if v.is_instance_of::<PyBool>() {
        return None;
    }
    if let Ok(f) = v.cast::<pyo3::types::PyFloat>() {
        return progress::count_from_f64(f.value()).ok();
    }
    v.extract::<u64>().ok()
}

/// The answer to `EvaluatePolicy` for a decision `kind`
/// (`ffi::decision_code`) with its fields as the host gave them. A field of
/// the wrong type makes it no decision at all (a failed policy, which
/// denies), never a decision with a default in its place; a code that
/// names no decision, or an expiry the core would not accept, is the
/// core's to refuse.
pub(crate) fn policy_answer(
    kind: u8,
    reason: Option<&Bound<'_, PyAny>>,
    approval_type: Option<&Bound<'_, PyAny>>,
    expires_in_ms: Option<&Bound<'_, PyAny>>,
) -> Answer {
    match (
        opt_text(reason),
        opt_text(approval_type),
        opt_ms(expires_in_ms),
    ) {
        (Some(reason), Some(approval_type), Some(expires_in_ms)) => {
            ffi::policy_answer(u32::from(kind), reason, approval_type, expires_in_ms)
        }
        _ => Answer::PolicyFailed(String::new()),
    }
}

/// `None`/absent → `Some(None)`; a `str` → `Some(Some(text))`; anything
/// else → `None` (not text).
fn opt_text(v: Option<&Bound<'_, PyAny>>) -> Option<Option<String>> {
    match v {
        None => Some(None),
        Some(v) if v.is_none() => Some(None),
        Some(v) => v
            .cast::<pyo3::types::PyString>()
            .ok()?
            .to_str()
            .ok()
            .map(|s| Some(s.to_owned())),
    }
}

/// A host's milliseconds: `None`/absent → `Some(None)`; an `int` or a
/// `float` (never a `bool`) → its value, negatives and NaN as 0 and values
/// past `u64` as `u64::MAX` for the core's bounds to refuse; anything else →
/// `None` (not a number).
fn opt_ms(v: Option<&Bound<'_, PyAny>>) -> Option<Option<u64>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Some(None);
    };
    if v.cast::<pyo3::types::PyBool>().is_ok() {
        return None;
    }
    if v.cast::<pyo3::types::PyInt>().is_ok() {
        let i: i128 = v.extract().unwrap_or(i128::MAX);
        return Some(Some(u64::try_from(i.max(0)).unwrap_or(u64::MAX)));
    }
    let f = v.cast::<pyo3::types::PyFloat>().ok()?.value();
    Some(Some(if f.is_nan() || f <= 0.0 { 0 } else { f as u64 }))
}
