//! Every slot's guard: a panic becomes a `RuntimeError` instead of
//! unwinding into C, and a send, throw or close while another is under
//! way is refused as a coroutine refuses it.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use super::RawCall;

/// Runs `f` attached as pyo3 counts it (CPython calls every slot with the
/// GIL, but pyo3 would otherwise defer each reference it drops to its pool,
/// freed later on whatever thread enters pyo3 next); a panic becomes a
/// `RuntimeError` instead of unwinding into C.
pub(super) fn guarded<R>(on_panic: R, f: impl FnOnce(Python<'_>) -> R) -> R {
    Python::attach(|py| caught(py, on_panic, f))
}

/// `guarded` for the first send, without pyo3's attach. That attach is
/// `PyGILState_Ensure` and `Release` on every call (pyo3 counts only its
/// own entries, and CPython calls the slot directly): measured at about
/// 0.1 µs, a fifth of what a governed call adds to the direct one. The
/// first send drops no `Py` on the path that finishes the call (the limits
/// walk clears a Python error without making one); a path that continues
/// in `_invoke_slow` enters pyo3 at once, which releases anything an error
/// path deferred. Every later send, `throw` and `close` stays `guarded`.
///
/// SAFETY: called only from a slot CPython invoked, so the thread holds
/// the GIL.
pub(super) unsafe fn guarded_first<R>(on_panic: R, f: impl FnOnce(Python<'_>) -> R) -> R {
    // SAFETY: see above.
    let py = unsafe { Python::assume_attached() };
    caught(py, on_panic, f)
}

fn caught<R>(py: Python<'_>, on_panic: R, f: impl FnOnce(Python<'_>) -> R) -> R {
    catch_unwind(AssertUnwindSafe(|| f(py))).unwrap_or_else(|_| {
        PyRuntimeError::new_err("orpc_agent: internal error while stepping a governed call")
            .restore(py);
        on_panic
    })
}

/// Refuses a send, throw or close while another is under way; else marks
/// the call running for `f`'s duration.
///
/// SAFETY: the GIL is held; `raw` is live.
pub(super) unsafe fn exclusive<R>(
    py: Python<'_>,
    raw: *mut RawCall,
    on_busy: R,
    f: impl FnOnce() -> R,
) -> R {
    unsafe {
        if (*raw).running {
            PyValueError::new_err("coroutine already executing").restore(py);
            return on_busy;
        }
        (*raw).running = true;
        let out = f();
        (*raw).running = false;
        out
    }
}
