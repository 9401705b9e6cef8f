//! Sending to the call: the first send runs the fast path and, when the
//! call ended there, returns its `InvokeOk` through `am_send`'s status (or
//! `tp_iternext`'s `StopIteration`); later sends go to the delegate
//! coroutine.

use std::ptr;

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;

use super::guard::{exclusive, guarded, guarded_first};
use super::{RawCall, arguments, finish};
use crate::frame::Frame;
use crate::outcome::InvokeOk;
use crate::registry::NativeRegistry;

pub(super) unsafe extern "C" fn await_self(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: `obj` is live; `await` takes the new reference.
    unsafe {
        ffi::Py_INCREF(obj);
    }
    obj
}

pub(super) unsafe extern "C" fn am_send(
    obj: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
    result: *mut *mut ffi::PyObject,
) -> ffi::PySendResult {
    // SAFETY: CPython passes a live `RawCall`, a live `arg` and a place
    // for the result.
    unsafe { *result = ptr::null_mut() };
    let raw = obj.cast::<RawCall>();
    let body = |py: Python<'_>| unsafe {
        exclusive(py, raw, ffi::PySendResult::PYGEN_ERROR, || {
            step(py, raw, arg, result)
        })
    };
    // SAFETY: `raw` is live (above); the slot runs with the GIL.
    if unsafe { (*raw).started } {
        guarded(ffi::PySendResult::PYGEN_ERROR, body)
    } else {
        unsafe { guarded_first(ffi::PySendResult::PYGEN_ERROR, body) }
    }
}

/// One send: the fast path the first time, then the delegate's.
///
/// SAFETY: the GIL is held; `raw` and `arg` are live; `result` is writable.
unsafe fn step(
    py: Python<'_>,
    raw: *mut RawCall,
    arg: *mut ffi::PyObject,
    result: *mut *mut ffi::PyObject,
) -> ffi::PySendResult {
    unsafe {
        let mut arg = arg;
        if !(*raw).started {
            if arg != ffi::Py_None() {
                // Refused, and the call can still start (as a coroutine's).
                PyTypeError::new_err("can't send non-None value to a just-started coroutine")
                    .restore(py);
                return ffi::PySendResult::PYGEN_ERROR;
            }
            (*raw).started = true;
            match first_send(py, raw) {
                Ok(Started::Finished(ok)) => {
                    *result = ok.into_ptr();
                    return ffi::PySendResult::PYGEN_RETURN;
                }
                Ok(Started::Continues(coroutine)) => (*raw).inner = coroutine.into_ptr(),
                Err(e) => {
                    e.restore(py);
                    return ffi::PySendResult::PYGEN_ERROR;
                }
            }
            arg = ffi::Py_None();
        }
        let inner = (*raw).inner;
        if inner.is_null() {
            PyRuntimeError::new_err("cannot reuse already awaited coroutine").restore(py);
            return ffi::PySendResult::PYGEN_ERROR;
        }
        // A strong reference for the send's duration: the delegate may
        // close this object from inside (then `inner` is released there).
        ffi::Py_INCREF(inner);
        let status = ffi::PyIter_Send(inner, arg, result);
        if status != ffi::PySendResult::PYGEN_NEXT {
            finish(raw, inner);
        }
        ffi::Py_DECREF(inner);
        status
    }
}

enum Started<'py> {
    /// The call ended in the fast path: its `InvokeOk`.
    Finished(Bound<'py, PyAny>),
    /// The coroutine that continues it.
    Continues(Bound<'py, PyAny>),
}

/// SAFETY: the GIL is held; `raw` is live.
unsafe fn first_send<'py>(py: Python<'py>, raw: *mut RawCall) -> PyResult<Started<'py>> {
    let (registry, name, input, frame) = unsafe { arguments(py, raw) }?;
    let registry = registry.cast_into::<NativeRegistry>()?;
    let native = registry.get();
    if let Ok(f) = frame.cast::<Frame>() {
        let r = native.invoke_fast(py, &name, f.get(), input.clone())?;
        if r.is_exact_instance_of::<InvokeOk>() {
            return Ok(Started::Finished(r));
        }
        let host = native.invoke_host(py)?;
        let slow = host.call_method1(intern!(py, "_invoke_slow"), (name, input, frame, r))?;
        return Ok(Started::Continues(slow));
    }
    let host = native.invoke_host(py)?;
    let slow = host.call_method1(intern!(py, "_invoke_any_frame"), (name, input, frame))?;
    Ok(Started::Continues(slow))
}

/// `next(call)` and `call.send(value)` from Python: a return is raised as
/// `StopIteration(output)`, as a coroutine's is.
///
/// SAFETY: the GIL is held; `obj` and `arg` are live.
unsafe fn send_raising(obj: *mut ffi::PyObject, arg: *mut ffi::PyObject) -> *mut ffi::PyObject {
    let mut result = ptr::null_mut();
    let status = unsafe { am_send(obj, arg, &mut result) };
    match status {
        ffi::PySendResult::PYGEN_NEXT => result,
        ffi::PySendResult::PYGEN_ERROR => ptr::null_mut(),
        // SAFETY: RETURN stored a new reference in `result`.
        ffi::PySendResult::PYGEN_RETURN => unsafe { raise_stop_iteration(result) },
    }
}

/// Raises `StopIteration(value)`, taking `value`'s reference; returns NULL.
/// Through the C API alone, not pyo3's `PyErr`: this ends the first send
/// on CPython 3.12+ (see `awaitable`'s module doc), which runs without pyo3's
/// attach (`guarded_first`), so nothing may be dropped into pyo3's pool.
/// The exception is made first and then set, as a generator's return is:
/// a value that is a tuple or an exception must not be read as the
/// exception's arguments.
///
/// SAFETY: the GIL is held; `value` is a new reference.
unsafe fn raise_stop_iteration(value: *mut ffi::PyObject) -> *mut ffi::PyObject {
    unsafe {
        let stop = ffi::PyExc_StopIteration;
        let exc = ffi::PyObject_CallFunctionObjArgs(stop, value, ptr::null_mut::<ffi::PyObject>());
        ffi::Py_DECREF(value);
        // NULL: the call failed with its own exception set (MemoryError).
        if !exc.is_null() {
            ffi::PyErr_SetObject(stop, exc);
            ffi::Py_DECREF(exc);
        }
        ptr::null_mut()
    }
}

pub(super) unsafe extern "C" fn iternext(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: CPython passes a live object; None is immortal or owned by it.
    unsafe { send_raising(obj, ffi::Py_None()) }
}

pub(super) unsafe extern "C" fn send_method(
    obj: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython passes a live object and argument (METH_O).
    unsafe { send_raising(obj, arg) }
}
