//! `GovernedCall`: what `registry.invoke(...)` returns — a native awaitable
//! in place of an `async def` coroutine.
//!
//! Why: a governed call that finishes in one crossing (the common case)
//! paid more for the Python coroutine around that crossing than for the
//! crossing's own work (issue 14's ≤ 1.3× target). This object keeps a
//! coroutine's contract and drops its cost:
//!
//! - **Lazy.** Nothing runs until it is first sent to (`await`, or a task
//!   stepping it): a call that is never awaited does nothing, as before.
//! - **One step.** The first send runs the fast path; when the call ended
//!   there, `await` returns the `InvokeOk` through `am_send`'s status (the
//!   slot `PyIter_Send` reads), with no coroutine and no `StopIteration`.
//!   (From CPython 3.12 an `await` inside a coroutine steps the object
//!   through `tp_iternext` instead, whose return is a `StopIteration`, made
//!   through the C API alone; asyncio's task step still reads `am_send`.)
//! - **Otherwise it delegates**, as `yield from` does, to the Python
//!   coroutine that continues the call (`CapabilityRegistry._invoke_slow`):
//!   sends, `throw` (a task's cancellation) and `close` go through to it,
//!   so cancellation is audited as before.
//!
//! The Python package registers the type as a `collections.abc.Coroutine`,
//! so `asyncio.run`, `create_task`, `gather` and anyio accept it.
//!
//! The type is built with the C API (`PyType_FromSpec`) because pyo3 has no
//! `am_send`. Every function in this module and its submodules holds the
//! GIL (CPython calls them with it) and never unwinds into C.
#![allow(unsafe_code)]

mod guard;
mod send;
mod throw;
mod type_object;

use std::ptr;

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

use crate::registry::NativeRegistry;
use type_object::create_type;

/// The object's memory: the call's arguments (owned until the object is
/// freed: `throw` before the first send needs them), and the coroutine it
/// delegates to once the call did not end at the first send.
#[repr(C)]
struct RawCall {
    ob_base: ffi::PyObject,
    registry: *mut ffi::PyObject,
    name: *mut ffi::PyObject,
    input: *mut ffi::PyObject,
    frame: *mut ffi::PyObject,
    /// The continuing coroutine while the call is suspended in it; NULL
    /// before the first send and after the call ended.
    inner: *mut ffi::PyObject,
    started: bool,
    /// A send, throw or close is under way: another one (from a thread the
    /// call started, or from inside it) is refused, as a coroutine refuses
    /// it ("already executing"), and changes nothing.
    running: bool,
}

static CALL_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// The `GovernedCall` type (created once per process).
pub(crate) fn call_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    CALL_TYPE
        .get_or_try_init(py, || create_type(py))
        .map(|t| t.bind(py))
}

/// A not yet started call of `registry.invoke_fast(name, frame, input)`.
pub(crate) fn new_call<'py>(
    registry: &Bound<'py, NativeRegistry>,
    name: &Bound<'py, PyAny>,
    input: &Bound<'py, PyAny>,
    frame: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = registry.py();
    let ty = call_type(py)?;
    // SAFETY: the GIL is held. `PyType_GenericAlloc` returns a zeroed
    // object of the type's basic size (`RawCall`), with a reference to the
    // (heap) type, or NULL with an exception set. Each field gets a new
    // (owned) reference, released in `dealloc`.
    unsafe {
        let obj = ffi::PyType_GenericAlloc(ty.as_type_ptr(), 0);
        if obj.is_null() {
            return Err(PyErr::fetch(py));
        }
        let raw = obj.cast::<RawCall>();
        (*raw).registry = registry.clone().into_any().into_ptr();
        (*raw).name = name.clone().into_ptr();
        (*raw).input = input.clone().into_ptr();
        (*raw).frame = frame.clone().into_ptr();
        Ok(Bound::from_owned_ptr(py, obj))
    }
}

/// New references to the call's arguments; an error, not a dangling
/// read, once the collector cleared them (`clear`, which it calls only on
/// an unreachable call).
///
/// SAFETY: the GIL is held; `raw` is live. Each field is a live reference
/// from `new_call` or NULL (`release_fields`, from `clear` or `dealloc`).
unsafe fn arguments<'py>(py: Python<'py>, raw: *mut RawCall) -> PyResult<Arguments<'py>> {
    let field = |p: *mut ffi::PyObject| {
        // SAFETY: `p` is NULL or a live reference (above).
        unsafe { Bound::from_borrowed_ptr_or_opt(py, p) }
            .ok_or_else(|| PyRuntimeError::new_err("orpc_agent: this governed call was cleared"))
    };
    // SAFETY: `raw` is live (above).
    unsafe {
        Ok((
            field((*raw).registry)?,
            field((*raw).name)?,
            field((*raw).input)?,
            field((*raw).frame)?,
        ))
    }
}

/// `(registry, name, input, frame)` as `registry.invoke` was given them.
type Arguments<'py> = (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

/// The delegate ended (or failed): this object is done with it.
///
/// SAFETY: the GIL is held; `raw` is live.
unsafe fn finish(raw: *mut RawCall, inner: *mut ffi::PyObject) {
    unsafe {
        if (*raw).inner == inner {
            (*raw).inner = ptr::null_mut();
            ffi::Py_DECREF(inner);
        }
    }
}
