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
//! `am_send`. Every function here holds the GIL (CPython calls them with it)
//! and never unwinds into C.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyTuple, PyType};

use crate::frame::Frame;
use crate::outcome::InvokeOk;
use crate::registry::NativeRegistry;

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

fn create_type(py: Python<'_>) -> PyResult<Py<PyType>> {
    // The type keeps pointers into its method table: it lives as long as
    // the process (one table per process, like the type).
    let methods: &'static mut [ffi::PyMethodDef] = Box::leak(Box::new([
        method(
            c"send",
            send_method,
            ffi::METH_O,
            c"send(value): step the call.",
        ),
        method(
            c"throw",
            throw_method,
            ffi::METH_VARARGS,
            c"throw(exception): raise it where the call is suspended.",
        ),
        method(
            c"close",
            close_method,
            ffi::METH_NOARGS,
            c"close(): end the call where it is suspended.",
        ),
        ffi::PyMethodDef::zeroed(),
    ]));
    let mut slots = [
        slot(ffi::Py_tp_dealloc, dealloc as *mut c_void),
        // Tracked by the collector: a task suspended in the call makes a
        // cycle through it (task → call → delegate → … → task), which only
        // the collector frees (and the abandoned call is then audited).
        slot(ffi::Py_tp_traverse, traverse as *mut c_void),
        slot(ffi::Py_tp_clear, clear as *mut c_void),
        slot(ffi::Py_am_await, await_self as *mut c_void),
        slot(ffi::Py_am_send, am_send as *mut c_void),
        slot(ffi::Py_tp_iternext, iternext as *mut c_void),
        slot(ffi::Py_tp_methods, methods.as_mut_ptr().cast()),
        slot(
            ffi::Py_tp_doc,
            c"A governed call: await it for its outcome (registry.invoke).".as_ptr() as *mut c_void,
        ),
        slot(0, ptr::null_mut()),
    ];
    let mut spec = ffi::PyType_Spec {
        name: c"orpc_agent._native.GovernedCall".as_ptr(),
        basicsize: c_int::try_from(std::mem::size_of::<RawCall>())
            .map_err(|_| PyRuntimeError::new_err("GovernedCall's size"))?,
        itemsize: 0,
        // Made by `registry.invoke` only (`GovernedCall()` would have no
        // call to run), and its type cannot be changed.
        flags: u32::try_from(
            ffi::Py_TPFLAGS_DEFAULT
                | ffi::Py_TPFLAGS_HAVE_GC
                | ffi::Py_TPFLAGS_DISALLOW_INSTANTIATION
                | ffi::Py_TPFLAGS_IMMUTABLETYPE,
        )
        .map_err(|_| PyRuntimeError::new_err("GovernedCall's flags"))?,
        slots: slots.as_mut_ptr(),
    };
    // SAFETY: the GIL is held; the spec and slots are read during the call
    // (the name and the method table are 'static); the result is a new
    // reference to a type object, or NULL with an exception set.
    unsafe {
        let ty = ffi::PyType_FromSpec(&mut spec);
        if ty.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, ty)
            .cast_into::<PyType>()?
            .unbind())
    }
}

fn method(
    name: &'static std::ffi::CStr,
    f: ffi::PyCFunction,
    flags: c_int,
    doc: &'static std::ffi::CStr,
) -> ffi::PyMethodDef {
    ffi::PyMethodDef {
        ml_name: name.as_ptr(),
        ml_meth: ffi::PyMethodDefPointer { PyCFunction: f },
        ml_flags: flags,
        ml_doc: doc.as_ptr(),
    }
}

fn slot(slot: c_int, pfunc: *mut c_void) -> ffi::PyType_Slot {
    ffi::PyType_Slot { slot, pfunc }
}

/// Runs `f` attached as pyo3 counts it (CPython calls every slot with the
/// GIL, but pyo3 would otherwise defer each reference it drops to its pool,
/// freed later on whatever thread enters pyo3 next); a panic becomes a
/// `RuntimeError` instead of unwinding into C.
fn guarded<R>(on_panic: R, f: impl FnOnce(Python<'_>) -> R) -> R {
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
unsafe fn guarded_first<R>(on_panic: R, f: impl FnOnce(Python<'_>) -> R) -> R {
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
unsafe fn exclusive<R>(py: Python<'_>, raw: *mut RawCall, on_busy: R, f: impl FnOnce() -> R) -> R {
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

unsafe extern "C" fn traverse(
    obj: *mut ffi::PyObject,
    visit: ffi::visitproc,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: the collector passes a live `RawCall`; each field is NULL or
    // a reference it owns; heap-type instances visit their type too.
    unsafe {
        let raw = obj.cast::<RawCall>();
        for field in [
            (*raw).registry,
            (*raw).name,
            (*raw).input,
            (*raw).frame,
            (*raw).inner,
        ] {
            if !field.is_null() {
                let r = visit(field, arg);
                if r != 0 {
                    return r;
                }
            }
        }
        visit(ffi::Py_TYPE(obj).cast(), arg)
    }
}

unsafe extern "C" fn clear(obj: *mut ffi::PyObject) -> c_int {
    // SAFETY: a live `RawCall`; see `release_fields`.
    unsafe { release_fields(obj.cast()) };
    0
}

/// Clears each field, then releases what it held (a finalizer that runs
/// meanwhile sees no dangling pointer).
///
/// SAFETY: the GIL is held; `raw` is live.
unsafe fn release_fields(raw: *mut RawCall) {
    unsafe {
        for field in [
            &raw mut (*raw).registry,
            &raw mut (*raw).name,
            &raw mut (*raw).input,
            &raw mut (*raw).frame,
            &raw mut (*raw).inner,
        ] {
            let value = std::mem::replace(&mut *field, ptr::null_mut());
            ffi::Py_XDECREF(value);
        }
    }
}

unsafe extern "C" fn dealloc(obj: *mut ffi::PyObject) {
    // SAFETY: `obj` is a `RawCall` whose last reference just went; each
    // field is NULL or an owned reference. Untracked before it is torn
    // down (the collector must not visit it half-freed).
    unsafe {
        ffi::PyObject_GC_UnTrack(obj.cast());
        release_fields(obj.cast());
        let ty = ffi::Py_TYPE(obj);
        let free = ffi::PyType_GetSlot(ty, ffi::Py_tp_free);
        let free: ffi::freefunc = std::mem::transmute(free);
        free(obj.cast());
        // Instances of heap types hold a reference to their type.
        ffi::Py_DECREF(ty.cast());
    }
}

unsafe extern "C" fn await_self(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: `obj` is live; `await` takes the new reference.
    unsafe {
        ffi::Py_INCREF(obj);
    }
    obj
}

unsafe extern "C" fn am_send(
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

enum Started<'py> {
    /// The call ended in the fast path: its `InvokeOk`.
    Finished(Bound<'py, PyAny>),
    /// The coroutine that continues it.
    Continues(Bound<'py, PyAny>),
}

/// SAFETY: the GIL is held; `raw`'s argument fields are live references.
unsafe fn first_send<'py>(py: Python<'py>, raw: *mut RawCall) -> PyResult<Started<'py>> {
    let (registry, name, input, frame) = unsafe { arguments(py, raw) };
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

/// New references to the call's arguments.
///
/// SAFETY: the GIL is held; the fields are live references (set in
/// `new_call`, released only in `dealloc`).
unsafe fn arguments<'py>(
    py: Python<'py>,
    raw: *mut RawCall,
) -> (
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
) {
    unsafe {
        (
            Bound::from_borrowed_ptr(py, (*raw).registry),
            Bound::from_borrowed_ptr(py, (*raw).name),
            Bound::from_borrowed_ptr(py, (*raw).input),
            Bound::from_borrowed_ptr(py, (*raw).frame),
        )
    }
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
/// on CPython 3.12+ (see the module doc), which runs without pyo3's
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

unsafe extern "C" fn iternext(obj: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: CPython passes a live object; None is immortal or owned by it.
    unsafe { send_raising(obj, ffi::Py_None()) }
}

unsafe extern "C" fn send_method(
    obj: *mut ffi::PyObject,
    arg: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython passes a live object and argument (METH_O).
    unsafe { send_raising(obj, arg) }
}

unsafe extern "C" fn throw_method(
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
        let (registry, name, input, frame) = arguments(py, raw);
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

unsafe extern "C" fn close_method(
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
