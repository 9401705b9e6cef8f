//! Python values ↔ the core's JSON (`serde_json::Value`) and CBOR
//! (`ciborium::Value`) data models.
//!
//! Only the slow paths convert: declarations, approval requests, audit
//! records, reports, and the inputs the core asks to see (`ExportInput`,
//! `ExportOutput`, the approval hash). The hot path keeps payloads as
//! Python objects (`Payload::Host`).

use orpc_agent_core::CapabilityError;
use orpc_agent_core::act::HashError;
use orpc_agent_core::act::deterministic::Path;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// Nesting past this is refused before the core sees it: a guard for the
/// Rust stack, far above the core's own hash limit (256), which it reports.
const MAX_CONVERT_DEPTH: usize = 1024;

/// Why the Python value at `path` is not in the JSON data model: the
/// core's hash sub-code and its wording (`HashError::of_host_value`, the
/// same in every binding); `kind` names a value JSON cannot hold. The
/// error is INVALID_INPUT, as the core's own hash errors are.
fn not_json(sub_code: &str, path: &Path<'_>, kind: &str) -> CapabilityError {
    HashError::of_host_value(sub_code, &path.pointer(), kind).into()
}

/// `a <type name>`, how a refusal names a value JSON cannot hold.
fn kind_of(obj: &Bound<'_, PyAny>) -> String {
    let name = obj.get_type().name().map(|n| n.to_string());
    format!("a {}", name.as_deref().unwrap_or("value"))
}

/// A Python value (dict, list, tuple, str, int, float, bool, None) as JSON.
pub fn py_to_json(obj: &Bound<'_, PyAny>) -> Result<Value, CapabilityError> {
    to_json(obj, 0, &Path::Root)
}

fn to_json(
    obj: &Bound<'_, PyAny>,
    depth: usize,
    path: &Path<'_>,
) -> Result<Value, CapabilityError> {
    if depth > MAX_CONVERT_DEPTH {
        return Err(not_json("TOO_DEEP", path, ""));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s
            .to_str()
            .map(|s| Value::String(s.to_owned()))
            .map_err(|_| not_json("NOT_JSON_VALUE", path, "a string that is not valid UTF-8"));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(not_json("UNREPRESENTABLE_NUMBER", path, ""));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| not_json("NON_FINITE_NUMBER", path, ""));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut m = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = k
                .cast::<PyString>()
                .map_err(|_| not_json("NON_TEXT_KEY", path, ""))?
                .to_str()
                .map_err(|_| not_json("NOT_JSON_VALUE", path, "a key that is not valid UTF-8"))?
                .to_owned();
            let value = to_json(&v, depth + 1, &Path::Key(path, &key))?;
            m.insert(key, value);
        }
        return Ok(Value::Object(m));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return (l.iter().enumerate())
            .map(|(i, v)| to_json(&v, depth + 1, &Path::Index(path, i)))
            .collect();
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return (t.iter().enumerate())
            .map(|(i, v)| to_json(&v, depth + 1, &Path::Index(path, i)))
            .collect();
    }
    Err(not_json("NOT_JSON_VALUE", path, &kind_of(obj)))
}

/// A Python value as CBOR, for the approval hash of arbitrary host values:
/// big integers within CBOR's 64-bit argument, byte strings, non-text keys
/// and non-finite floats are carried over so the core can hash or refuse
/// them with its own codes.
pub fn py_to_cbor(obj: &Bound<'_, PyAny>) -> Result<ciborium::Value, CapabilityError> {
    to_cbor(obj, 0, &Path::Root)
}

fn to_cbor(
    obj: &Bound<'_, PyAny>,
    depth: usize,
    path: &Path<'_>,
) -> Result<ciborium::Value, CapabilityError> {
    use ciborium::Value as Cbor;
    if depth > MAX_CONVERT_DEPTH {
        return Err(not_json("TOO_DEEP", path, ""));
    }
    if obj.is_none() {
        return Ok(Cbor::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Cbor::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s
            .to_str()
            .map(|s| Cbor::Text(s.to_owned()))
            .map_err(|_| not_json("NOT_JSON_VALUE", path, "a string that is not valid UTF-8"));
    }
    if obj.cast::<PyInt>().is_ok() {
        let i: i128 = obj
            .extract()
            .map_err(|_| not_json("UNREPRESENTABLE_NUMBER", path, ""))?;
        return ciborium::value::Integer::try_from(i)
            .map(Cbor::Integer)
            .map_err(|_| not_json("UNREPRESENTABLE_NUMBER", path, ""));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Cbor::Float(f.value()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Cbor::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut m = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = to_cbor(&k, depth + 1, path)?;
            let text = key.as_text().map(str::to_owned);
            let value = match &text {
                Some(t) => to_cbor(&v, depth + 1, &Path::Key(path, t))?,
                None => to_cbor(&v, depth + 1, path)?,
            };
            m.push((key, value));
        }
        return Ok(Cbor::Map(m));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return (l.iter().enumerate())
            .map(|(i, v)| to_cbor(&v, depth + 1, &Path::Index(path, i)))
            .collect::<Result<_, _>>()
            .map(Cbor::Array);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return (t.iter().enumerate())
            .map(|(i, v)| to_cbor(&v, depth + 1, &Path::Index(path, i)))
            .collect::<Result<_, _>>()
            .map(Cbor::Array);
    }
    // A tagged value (cbor2's CBORTag has `tag` and `value`): carried as a
    // tag so the core refuses it with its own code.
    if let (Ok(tag), Ok(value)) = (obj.getattr("tag"), obj.getattr("value"))
        && let Ok(tag) = tag.extract::<u64>()
    {
        return Ok(Cbor::Tag(tag, Box::new(to_cbor(&value, depth + 1, path)?)));
    }
    Err(not_json("NOT_JSON_VALUE", path, &kind_of(obj)))
}

/// A core record (a frame, an actor, redaction info, an approval request)
/// as Python values, through its JSON form. Never a silent default: a
/// record that does not serialize (it always does today) is an error
/// naming `what`, not an empty value a hook would read as "no actor".
pub fn record_to_py<'py>(
    py: Python<'py>,
    record: &impl serde::Serialize,
    what: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_value(record).map_err(|e| {
        pyo3::exceptions::PyRuntimeError::new_err(format!(
            "orpc_agent: the core's {what} has no JSON form: {e}"
        ))
    })?;
    json_to_py(py, &json)
}

/// JSON as plain Python values (dict, list, str, int, float, bool, None).
pub fn json_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for item in a {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(o) => {
            let dict = PyDict::new(py);
            for (k, item) in o {
                dict.set_item(k, json_to_py(py, item)?)?;
            }
            dict.into_any()
        }
    })
}
