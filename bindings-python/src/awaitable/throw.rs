//! `throw` and `close`: a task's cancellation and a closed coroutine go
//! through to the delegate, so they are audited as before; before the
//! first send the exception is raised where the call stands and nothing
//! runs.

use std::ptr;

use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::RawCall;
use super::guard::{exclusive, guarded};
use super::{arguments, finish};
use crate::registry::NativeRegistry;

pub(super) unsafe extern "C" fn throw_method(
    obj: *mut ffi::PyObject,
    args: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    guarded(ptr::null_mut(), |py| {
        // SAFETY: CPython passes a live `RawCall` and an argument tuple (METH_VARARGS).
        let raw = obj.cast::<RawCall>();
        let args = unsafe { Bound::from_borrowed_ptr(py, args) };
        let thrown = unsafe { exclusive(py, raw, None, || Some(throw(py, raw, &args))) };
        let Some(thrown) = thrown else {
            return ptr::null_mut();
        };
        thrown.map_or_else(
            |e| {
                e.restore(py);
                ptr::null_mut()
            },
            Bound::into_ptr,
        )
    })
}

/// Where the call is suspended, the delegate handles the exception (a
/// cancelled task is audited as cancelled there). Before the first send
/// and after the end, a coroutine raises it where it stands: a fresh,
/// never started delegate does exactly that, and nothing runs.
///
/// SAFETY: the GIL is held; `raw` is live.
unsafe fn throw<'py>(
    py: Python<'py>,
    raw: *mut RawCall,
    args: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let args = args.cast::<PyTuple>()?;
    unsafe {
        let inner = (*raw).inner;
        if !inner.is_null() {
            let delegate = Bound::from_borrowed_ptr(py, inner);
            let outcome = delegate.call_method1(intern!(py, "throw"), args.clone());
            if outcome.is_err() {
                finish(raw, inner);
            }
            return outcome;
        }
        (*raw).started = true;
        let (registry, name, input, frame) = arguments(py, raw)?;
        let host = registry
            .cast_into::<NativeRegistry>()?
            .get()
            .invoke_host(py)?;
        let fresh = host.call_method1(intern!(py, "_invoke_any_frame"), (name, input, frame))?;
        let thrown = fresh.call_method1(intern!(py, "throw"), args.clone());
        // Closed either way (a throw refused for its arguments left it
        // unstarted, which would warn that it was never awaited).
        fresh.call_method0(intern!(py, "close"))?;
        thrown
    }
}

pub(super) unsafe extern "C" fn close_method(
    obj: *mut ffi::PyObject,
    _: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    guarded(ptr::null_mut(), |py| {
        // SAFETY: CPython passes a live `RawCall` (METH_NOARGS).
        let raw = obj.cast::<RawCall>();
        unsafe {
            exclusive(py, raw, ptr::null_mut(), || {
                // A call closed before its first send never runs.
                (*raw).started = true;
                let inner = (*raw).inner;
                if inner.is_null() {
                    return py.None().into_ptr();
                }
                // Released only once it closed (a refused close leaves the
                // call where it was).
                let delegate = Bound::from_borrowed_ptr(py, inner);
                match delegate.call_method0(intern!(py, "close")) {
                    Ok(closed) => {
                        finish(raw, inner);
                        closed.into_ptr()
                    }
                    Err(e) => {
                        e.restore(py);
                        ptr::null_mut()
                    }
                }
            })
        }
    })
}
