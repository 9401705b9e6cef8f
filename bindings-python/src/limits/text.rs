//! Strings and bytes-like values measured as the text they are (or
//! become): a str's UTF-8 without a copy, lone surrogates through
//! `surrogatepass`, bytes, bytearrays and memoryviews as their decoded
//! text, read no further than the string limit needs.

use orpc_agent_core::limits::{Limit, MAX_STRING_BYTES, Meter};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PySlice, PyString};

use super::clear_error;

/// A str's UTF-8 text, without copying it; `None` (its UnicodeEncodeError
/// cleared) for one with lone surrogates. pyo3's `to_str` would hand that
/// error back as a `PyErr`, whose drop `clear_error` explains.
fn utf8<'a>(s: &'a Bound<'_, PyString>) -> Option<&'a str> {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: `s` is a live str and the GIL is held. The UTF-8 buffer is
    // cached in the str object and lives as long as it (`'a`); CPython
    // writes it as valid UTF-8.
    unsafe {
        let data = ffi::PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut size);
        if data.is_null() {
            clear_error(s.py());
            return None;
        }
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), usize::try_from(size).ok()?);
        Some(std::str::from_utf8_unchecked(bytes))
    }
}

/// A string (a value, or a key when `key`): its UTF-8 text without
/// copying it; one with lone surrogates, which has none, through its
/// `surrogatepass` encoding (each surrogate counted as the 3 bytes of a
/// replacement character).
pub(super) fn string(s: &Bound<'_, PyString>, meter: &mut Meter, key: bool) -> Result<(), Limit> {
    let report = |meter: &mut Meter, t: &str| if key { meter.key(t) } else { meter.string(t) };
    if let Some(t) = utf8(s) {
        return report(meter, t);
    }
    // SAFETY: `s` is a live str and the GIL is held; the C codec allocates
    // a new bytes object (or fails with an exception, taken below).
    let encoded = unsafe {
        ffi::PyUnicode_AsEncodedString(s.as_ptr(), c"utf-8".as_ptr(), c"surrogatepass".as_ptr())
    };
    if encoded.is_null() {
        clear_error(s.py());
        return report(meter, "");
    }
    // SAFETY: a new, non-null reference (above).
    let encoded = unsafe { Bound::from_owned_ptr(s.py(), encoded) };
    let bytes = encoded
        .cast::<pyo3::types::PyBytes>()
        .map(|b| b.as_bytes())
        .unwrap_or_default();
    report(meter, &String::from_utf8_lossy(bytes))
}

/// The bytes of a bytes-like value that decide its measure: all of them,
/// or the first `MAX_STRING_BYTES + 1` — decoding never makes text shorter
/// than its bytes, so a longer value is over the string limit either way
/// and the meter gives the same verdict without a copy of all of it.
const BYTES_HEAD: usize = MAX_STRING_BYTES + 1;

/// A bytes-like value (a value, or a key when `key`) reported as the
/// string it becomes; `None` when `obj` is not bytes-like.
pub(super) fn bytes_like(
    obj: &Bound<'_, PyAny>,
    meter: &mut Meter,
    key: bool,
) -> Option<Result<(), Limit>> {
    let report = |meter: &mut Meter, data: &[u8]| {
        let text = String::from_utf8_lossy(&data[..data.len().min(BYTES_HEAD)]);
        if key {
            meter.key(&text)
        } else {
            meter.string(&text)
        }
    };
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Some(report(meter, b.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        // SAFETY: the slice is read and dropped inside `report`, which runs
        // no Python code (Rust allocation and the meter's counting only), so
        // nothing can resize the bytearray while it is borrowed.
        return Some(report(meter, unsafe { b.as_bytes() }));
    }
    if let Ok(view) = obj.cast::<PyMemoryView>() {
        // Attached as pyo3 counts it (see `clear_error`): a view that cannot
        // be flattened drops a `PyErr` here.
        return Some(match Python::attach(|_| memoryview_head(view)) {
            Some(head) => report(meter, head.as_bytes()),
            None => Ok(()), // released: it holds nothing any schema can read
        });
    }
    None
}

/// The first `BYTES_HEAD` bytes of a memoryview as bytes: a contiguous
/// view flattened to bytes (`cast("B")`) and sliced, else (a strided view)
/// all of it (`tobytes`).
fn memoryview_head<'py>(view: &Bound<'py, PyMemoryView>) -> Option<Bound<'py, PyBytes>> {
    let py = view.py();
    let head = view
        .call_method1("cast", ("B",))
        .and_then(|flat| flat.get_item(PySlice::new(py, 0, BYTES_HEAD as isize, 1)))
        .and_then(|head| head.call_method0("tobytes"))
        .or_else(|_| view.call_method0("tobytes"));
    head.ok().and_then(|b| b.cast_into::<PyBytes>().ok())
}
