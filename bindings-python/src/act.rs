//! Thin shims over `orpc_agent_core::ffi::act`: `std:` metadata
//! decode/encode/check, the `act:component` section and manifest,
//! `std:forward`, capability-grant decisions and tool-definition metadata.
//! Python values cross as the core's JSON views; the core decides.

use orpc_agent_core::CapabilityError;
use pyo3::prelude::*;

use crate::{convert, errors};

/// Adds this module's functions to `_native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(std_meta_decode, m)?)?;
    m.add_function(wrap_pyfunction!(std_meta_encode, m)?)?;
    m.add_function(wrap_pyfunction!(std_meta_check, m)?)?;
    m.add_function(wrap_pyfunction!(act_component_inspect, m)?)?;
    m.add_function(wrap_pyfunction!(act_component_embed, m)?)?;
    m.add_function(wrap_pyfunction!(act_manifest_check, m)?)?;
    m.add_function(wrap_pyfunction!(std_forward_wrap, m)?)?;
    m.add_function(wrap_pyfunction!(std_forward_unwrap, m)?)?;
    m.add_function(wrap_pyfunction!(capability_grant_decide, m)?)?;
    m.add_function(wrap_pyfunction!(std_tool_definition_meta, m)?)?;
    Ok(())
}

/// The JSON view (a dict) of a CBOR `std:` metadata map
/// (`orpc_agent_core::ffi::act::meta_decode`).
#[pyfunction]
fn std_meta_decode<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let view = orpc_agent_core::ffi::act::meta_decode(data)
        .map_err(|e| errors::capability_error(py, &e))?;
    convert::json_to_py(py, &view)
}

/// The deterministic CBOR of a metadata map given in the JSON view.
#[pyfunction]
fn std_meta_encode<'py>(
    py: Python<'py>,
    meta: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let view = convert::py_to_json(meta).map_err(fail)?;
    let bytes = orpc_agent_core::ffi::act::meta_encode(&view).map_err(fail)?;
    Ok(pyo3::types::PyBytes::new(py, &bytes))
}

/// The problems (dicts) of a metadata map at a position.
#[pyfunction]
#[pyo3(signature = (data, position, strict=false))]
fn std_meta_check<'py>(
    py: Python<'py>,
    data: &[u8],
    position: &str,
    strict: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let problems = orpc_agent_core::ffi::act::meta_check(data, position, strict)
        .map_err(|e| errors::capability_error(py, &e))?;
    convert::json_to_py(py, &serde_json::Value::Array(problems))
}

/// The `act:component` metadata (a dict) of a WebAssembly component.
#[pyfunction]
fn act_component_inspect<'py>(py: Python<'py>, wasm: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let v = orpc_agent_core::ffi::act::component_inspect(wasm)
        .map_err(|e| errors::capability_error(py, &e))?;
    convert::json_to_py(py, &v)
}

/// The component with the `act:component` section a manifest describes.
#[pyfunction]
#[pyo3(signature = (manifest, wasm, manifest_name="act.toml"))]
fn act_component_embed<'py>(
    py: Python<'py>,
    manifest: &str,
    wasm: &[u8],
    manifest_name: &str,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let bytes = orpc_agent_core::ffi::act::component_embed(manifest, manifest_name, wasm)
        .map_err(|e| errors::capability_error(py, &e))?;
    Ok(pyo3::types::PyBytes::new(py, &bytes))
}

/// An `act.toml` manifest checked: the metadata it describes (a dict).
#[pyfunction]
#[pyo3(signature = (manifest, manifest_name="act.toml"))]
fn act_manifest_check<'py>(
    py: Python<'py>,
    manifest: &str,
    manifest_name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let v = orpc_agent_core::ffi::act::manifest_check(manifest, manifest_name)
        .map_err(|e| errors::capability_error(py, &e))?;
    convert::json_to_py(py, &v)
}

/// `std:forward` over a chain of hops (metadata maps in the JSON view).
#[pyfunction]
fn std_forward_wrap<'py>(py: Python<'py>, hops: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let hops = convert::py_to_json(hops).map_err(fail)?;
    let v = orpc_agent_core::ffi::act::forward_wrap(&hops).map_err(fail)?;
    convert::json_to_py(py, &v)
}

/// One `std:forward` layer unwrapped: `{"here": ..., "next": ... | None}`.
#[pyfunction]
fn std_forward_unwrap<'py>(
    py: Python<'py>,
    meta: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let meta = convert::py_to_json(meta).map_err(fail)?;
    let v = orpc_agent_core::ffi::act::forward_unwrap(&meta).map_err(fail)?;
    convert::json_to_py(py, &v)
}

/// A capability-class use decided against a component's declarations and
/// the host's grants: `{"allowed": ..., "reason"?, "message"?}`.
#[pyfunction]
fn capability_grant_decide<'py>(
    py: Python<'py>,
    declared: &Bound<'py, PyAny>,
    grants: &Bound<'py, PyAny>,
    request: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let declared = convert::py_to_json(declared).map_err(fail)?;
    let grants = convert::py_to_json(grants).map_err(fail)?;
    let request = convert::py_to_json(request).map_err(fail)?;
    let v = orpc_agent_core::ffi::act::grant_decide(&declared, &grants, &request).map_err(fail)?;
    convert::json_to_py(py, &v)
}

/// The tool-definition metadata (JSON view) a capability's agent metadata states.
#[pyfunction]
fn std_tool_definition_meta<'py>(
    py: Python<'py>,
    capability_id: &str,
    meta: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let meta = convert::py_to_json(meta).map_err(fail)?;
    let v = orpc_agent_core::ffi::act::tool_definition_meta(capability_id, &meta).map_err(fail)?;
    convert::json_to_py(py, &v)
}
