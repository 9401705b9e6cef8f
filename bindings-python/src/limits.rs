//! Input limits on the raw input a Python caller hands `invoke` (issue 10).
//!
//! The input stays a Python object (`Payload::Host`), so the core never
//! sees it as JSON before stage 4. This walk reports it, node by node, to
//! the core's `limits::Meter`, which counts and decides; the verdict goes
//! to the invocation before its first step (`answer_input_limits`). The
//! walk only converts: the limits, the counting and the error are the
//! core's.
//!
//! What is measured is the JSON shape a transport delivers — dict, list,
//! tuple, str, int, float, bool, None (and their subclasses) — and
//! bytes-like values (bytes, bytearray, memoryview), as the JSON string
//! they become: their UTF-8 text, each invalid sequence a replacement
//! character (what the schemas' `dump` makes of bytes, and what a `str`
//! field validates them into), so a 2 MiB byte string is over the string
//! limit like a 2 MiB `str`. Other objects (a pydantic model instance, a
//! date) are the application's own values, handed over in process; they
//! count as nothing here and are validated as usual. Dict keys that are
//! bytes-like count as their text; other keys that are not strings as
//! empty strings.
//!
//! It runs on every call, so it reads containers through the C API
//! (`PyDict_Next`, `PyList_GetItem`) rather than pyo3's iterators, taking a
//! strong reference to each key, value and item at once: nothing it walks
//! can be freed under it, even if an allocation here starts a garbage
//! collection whose finalizers mutate a container (Python 3.10 and 3.11
//! collect synchronously). No call here runs Python code by itself:
//! ints are read with `PyLong_AsLongLongAndOverflow` (no exception) and
//! `PyNumber_ToBase`, strings with `PyUnicode_AsUTF8AndSize`, or encoded
//! with `surrogatepass` when they hold lone surrogates (which
//! `json.loads` produces), bytes and bytearrays by their buffers, a
//! memoryview through its own (C) `cast`/`tobytes` — the type cannot be
//! subclassed. This module (with `limits/text.rs`), `eager.rs` and
//! `awaitable` are the crate's only `unsafe`.
#![allow(unsafe_code)]

mod text;

use std::cell::Cell;

use orpc_agent_core::CapabilityError;
use orpc_agent_core::limits::{Limit, Meter};
use pyo3::PyTypeInfo;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Number;

use text::{bytes_like, string};

/// Clears the error a C call here set, without making a `PyErr` of it: the
/// walk runs inside the awaitable's first send, where a dropped `PyErr`'s
/// references would wait in pyo3's pool (`awaitable::guard::guarded_first`).
fn clear_error(_py: Python<'_>) {
    // SAFETY: the GIL is held (the caller shows a `Python` token).
    unsafe { ffi::PyErr_Clear() }
}

thread_local! {
    /// Whether the walk under way met a NaN or infinity (the walk runs
    /// with the GIL held, on this thread, start to end).
    static NON_FINITE: Cell<bool> = const { Cell::new(false) };
}

/// The limits verdict on `input`, then — within the limits — where it
/// holds its first NaN or infinity (`ffi::measured_input`, the rule of
/// every binding: it has no JSON form, so no validator, policy or handler
/// is handed a value the core holds as `null`). The pointer is found by a
/// second walk, only then.
pub fn measure(input: &Bound<'_, PyAny>) -> Result<(), CapabilityError> {
    let mut meter = Meter::new();
    NON_FINITE.with(|f| f.set(false));
    walk(input, 1, &mut meter).map_err(|l| meter.error(l))?;
    if !NON_FINITE.with(Cell::get) {
        return Ok(());
    }
    let at = first_non_finite(input, String::new(), 1).unwrap_or_default();
    orpc_agent_core::ffi::measured_input(None, Some(at)).unwrap_or(Ok(()))
}

/// The JSON pointer of the first NaN or infinity in `obj` (a float, or in
/// a dict, list or tuple, at most the core's depth).
fn first_non_finite(obj: &Bound<'_, PyAny>, path: String, depth: usize) -> Option<String> {
    if let Ok(f) = obj.cast::<PyFloat>() {
        return (!f.value().is_finite()).then_some(path);
    }
    if depth > orpc_agent_core::limits::MAX_INPUT_DEPTH {
        return None;
    }
    let step = |key: &str| format!("{path}/{}", key.replace('~', "~0").replace('/', "~1"));
    // Read as the walk reads (no Python code runs): keys that are not
    // strings name nothing, as they count as empty strings there.
    if let Ok(d) = obj.cast::<PyDict>() {
        return d.iter().find_map(|(k, v)| {
            let key = as_type::<PyString>(&k).and_then(|s| s.to_str().ok().map(str::to_owned));
            first_non_finite(&v, step(&key.unwrap_or_default()), depth + 1)
        });
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l
            .iter()
            .enumerate()
            .find_map(|(i, v)| first_non_finite(&v, step(&i.to_string()), depth + 1));
    }
    let t = obj.cast::<PyTuple>().ok()?;
    t.iter()
        .enumerate()
        .find_map(|(i, v)| first_non_finite(&v, step(&i.to_string()), depth + 1))
}

/// `obj` as exactly a `T`: a comparison of the type pointer, where a
/// subclass test is a call into the interpreter (the stable ABI has no
/// inline flag test), and a failed cast makes an error value only to drop
/// it. Most inputs are made of the exact built-in types.
fn exact<'a, 'py, T: PyTypeInfo>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, T>> {
    obj.is_exact_instance_of::<T>()
        .then(|| obj.cast_exact::<T>().ok())
        .flatten()
}

/// `obj` as a `T`, its subclasses included, the exact type tested first.
fn as_type<'a, 'py, T: PyTypeInfo>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, T>> {
    exact::<T>(obj).or_else(|| obj.cast::<T>().ok())
}

fn walk(obj: &Bound<'_, PyAny>, depth: usize, meter: &mut Meter) -> Result<(), Limit> {
    // The exact types first (a bool is not an exact int: it is a subclass,
    // below), then their subclasses.
    if obj.is_exact_instance_of::<PyInt>() {
        return integer(obj, meter);
    }
    if let Some(s) = exact::<PyString>(obj) {
        return string(s, meter, false);
    }
    if let Some(d) = exact::<PyDict>(obj) {
        return dict(d, depth, meter);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return string(s, meter, false);
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return dict(d, depth, meter);
    }
    if obj.is_none() {
        return meter.null();
    }
    // Before int: a bool is an int in Python.
    if let Ok(b) = obj.cast::<PyBool>() {
        return meter.bool(b.is_true());
    }
    if obj.cast::<PyInt>().is_ok() {
        return integer(obj, meter);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return match Number::from_f64(f.value()) {
            Some(n) => meter.number(&n),
            None => {
                NON_FINITE.with(|f| f.set(true)); // refused once the limits passed (`measure`)
                meter.null()
            }
        };
    }
    if let Ok(l) = obj.cast::<PyList>() {
        meter.array(depth, l.len())?;
        for item in l.iter() {
            walk(&item, depth + 1, meter)?;
        }
        return Ok(());
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        meter.array(depth, t.len())?;
        return t
            .iter_borrowed()
            .try_for_each(|v| walk(&v, depth + 1, meter));
    }
    bytes_like(obj, meter, false).unwrap_or(Ok(()))
}

/// A dict: its size, then each key (as a string) and value.
fn dict(d: &Bound<'_, PyDict>, depth: usize, meter: &mut Meter) -> Result<(), Limit> {
    let py = d.py();
    // The meter refuses a container past the depth limit before the
    // walk descends into it: a dict that contains itself ends there.
    meter.object(depth, d.len())?;
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: `d` is a live dict (we hold a reference) and the GIL is
    // held. PyDict_Next hands out borrowed references, made strong at
    // once, before any other call into Python.
    while unsafe { ffi::PyDict_Next(d.as_ptr(), &mut pos, &mut key, &mut value) } != 0 {
        // SAFETY: non-null borrowed references from PyDict_Next (above).
        let (k, v) = unsafe {
            (
                Bound::from_borrowed_ptr(py, key),
                Bound::from_borrowed_ptr(py, value),
            )
        };
        match as_type::<PyString>(&k) {
            Some(s) => string(s, meter, true)?,
            None => match bytes_like(&k, meter, true) {
                Some(verdict) => verdict?,
                None => meter.key("")?,
            },
        }
        walk(&v, depth + 1, meter)?;
    }
    Ok(())
}

/// An int, by its decimal length, read from its value (never through
/// `__str__`, which a subclass could override with Python code).
fn integer(obj: &Bound<'_, PyAny>, meter: &mut Meter) -> Result<(), Limit> {
    let mut overflow: std::os::raw::c_int = 0;
    // SAFETY: `obj` is a live int (PyLong_Check passed) and the GIL is
    // held; this reads the stored value and reports overflow without an
    // exception.
    let small = unsafe { ffi::PyLong_AsLongLongAndOverflow(obj.as_ptr(), &mut overflow) };
    if overflow == 0 {
        if small == -1 {
            clear_error(obj.py()); // none expected for an int
        }
        return meter.integer(small);
    }
    // Beyond 64 bits: its decimal length from its hexadecimal text
    // (linear, and free of the interpreter's limit on decimal digits);
    // within a digit of the exact count.
    // SAFETY: as above; PyNumber_ToBase formats an int's value (an int
    // subclass is not asked for `__index__`) and returns a new reference.
    let hex = unsafe { ffi::PyNumber_ToBase(obj.as_ptr(), 16) };
    if hex.is_null() {
        clear_error(obj.py());
        return Ok(());
    }
    // SAFETY: a new, non-null reference (above).
    let hex = unsafe { Bound::from_owned_ptr(obj.py(), hex) };
    let Some(text) = hex
        .cast::<PyString>()
        .ok()
        .and_then(|s| s.to_str().ok().map(str::to_owned))
    else {
        return Ok(());
    };
    let negative = usize::from(text.starts_with('-'));
    let hex_digits = text.len().saturating_sub(2 + negative); // "0x", "-"
    let digits = (hex_digits as f64 * std::f64::consts::LOG10_2 * 4.0).ceil() as usize;
    meter.number_text(digits + negative)
}
