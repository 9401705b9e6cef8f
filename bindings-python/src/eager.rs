//! Stepping a handler's coroutine once, synchronously, from Rust; and
//! calling a hook with one argument without an argument tuple.
//!
//! Python's `coro.send(None)` reports a return by raising `StopIteration`,
//! which costs more than the rest of a governed call. The C API's
//! `PyIter_Send` reports it as a status instead. Rust never *awaits* the
//! coroutine: if it yields, the host's event loop continues it (see
//! `_handler.continue_handler`). One of the three modules with `unsafe` (with
//! `limits.rs` and `awaitable.rs`).
#![allow(unsafe_code)]

use pyo3::ffi;
use pyo3::prelude::*;

/// What one step of a coroutine gave.
pub enum Sent<'py> {
    /// It finished with this value, without suspending.
    Returned(Bound<'py, PyAny>),
    /// It suspended, yielding this value (a future, or `None`) to its task.
    Yielded(Bound<'py, PyAny>),
}

/// `coro.send(None)`, without a `StopIteration` for the common case.
pub fn send_none<'py>(coro: &Bound<'py, PyAny>) -> PyResult<Sent<'py>> {
    let py = coro.py();
    let mut result: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: the GIL is held (`py`); `coro` and `None` are live objects
    // that `PyIter_Send` only borrows. On RETURN and NEXT it stores a new
    // (owned) reference in `result`, which `from_owned_ptr` takes over; on
    // ERROR `result` is NULL and an exception is set, which `fetch` takes.
    // (`ffi::Py_None` borrows None: `py.None()` would make and drop an
    // owned reference, deferred when pyo3 did not attach this thread.)
    let status = unsafe { ffi::PyIter_Send(coro.as_ptr(), ffi::Py_None(), &mut result) };
    match status {
        ffi::PySendResult::PYGEN_RETURN => {
            // SAFETY: see above — `result` is a new, non-NULL reference.
            Ok(Sent::Returned(unsafe { Bound::from_owned_ptr(py, result) }))
        }
        ffi::PySendResult::PYGEN_NEXT => {
            // SAFETY: see above — `result` is a new, non-NULL reference.
            Ok(Sent::Yielded(unsafe { Bound::from_owned_ptr(py, result) }))
        }
        ffi::PySendResult::PYGEN_ERROR => Err(PyErr::fetch(py)),
    }
}

/// `callable(arg)` without an argument tuple. Under the stable ABI before
/// Python 3.12 (this module's `abi3-py310`), pyo3's `call1` builds a
/// one-item tuple per call, which CPython unpacks again for a callable
/// that takes vectorcall (a function, a bound method, a pydantic
/// validator); `PyObject_CallFunctionObjArgs`, in the stable ABI, passes
/// the argument on the C stack through vectorcall instead. For the hot
/// path's validator and handler calls.
pub fn call_one<'py>(
    callable: &Bound<'py, PyAny>,
    arg: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = callable.py();
    // SAFETY: the GIL is held (`py`); both objects are live and only
    // borrowed by the call; the argument list ends with NULL as the
    // variadic function requires. The result is a new reference, or NULL
    // with an exception set (which `fetch` takes).
    let result = unsafe {
        ffi::PyObject_CallFunctionObjArgs(
            callable.as_ptr(),
            arg.as_ptr(),
            std::ptr::null_mut::<ffi::PyObject>(),
        )
    };
    if result.is_null() {
        Err(PyErr::fetch(py))
    } else {
        // SAFETY: a new, non-NULL reference (above).
        Ok(unsafe { Bound::from_owned_ptr(py, result) })
    }
}
