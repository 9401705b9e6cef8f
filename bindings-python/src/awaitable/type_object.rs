//! The `GovernedCall` type object, built with `PyType_FromSpec` (pyo3 has
//! no `am_send`): its method table and slots, and the garbage collector's
//! side of the object (traverse, clear, dealloc).

use std::ffi::{c_int, c_void};
use std::ptr;

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

use super::RawCall;
use super::send::{am_send, await_self, iternext, send_method};
use super::throw::{close_method, throw_method};

pub(super) fn create_type(py: Python<'_>) -> PyResult<Py<PyType>> {
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
