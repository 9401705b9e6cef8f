//! What a registry tells about its capabilities: indexes by id or tool
//! name, the inspect report, and descriptors (JSON and CBOR) per surface.

use orpc_agent_core::Surface;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::NativeRegistry;
use crate::convert::json_to_py;

#[pymethods]
impl NativeRegistry {
    /// The registry index of a capability *id* (not a tool name), resolved
    /// once by the host so later calls start by integer.
    fn index_of(&self, id: &str) -> Option<u32> {
        self.shared
            .host
            .registry()
            .resolve(id)
            .filter(|c| c.id == id)
            .map(|c| c.index)
    }

    /// The registry index an id or adapter tool name resolves to.
    fn resolve(&self, id_or_tool_name: &str) -> Option<u32> {
        self.shared
            .host
            .registry()
            .resolve(id_or_tool_name)
            .map(|c| c.index)
    }

    /// The capability id at `index`.
    fn id_at(&self, index: u32) -> Option<String> {
        self.shared.host.registry().get(index).map(|c| c.id.clone())
    }

    /// The inspect() report as a dict.
    fn inspect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.shared.host.registry().inspect().to_json())
    }

    /// The same descriptors as one CBOR array (`ffi::act::descriptors_cbor`).
    fn descriptors_cbor<'py>(
        &self,
        py: Python<'py>,
        surface: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        orpc_agent_core::ffi::act::descriptors_cbor(self.shared.host.registry(), surface)
            .map(|b| PyBytes::new(py, &b))
            .map_err(|e| crate::errors::capability_error(py, &e))
    }

    /// Portable descriptors of the capabilities exposed on `surface`.
    fn descriptors<'py>(&self, py: Python<'py>, surface: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let surface = Surface::parse(surface)
            .ok_or_else(|| PyValueError::new_err(format!("unknown surface `{surface}`")))?;
        self.shared
            .host
            .registry()
            .descriptors(surface)
            .iter()
            .map(|d| json_to_py(py, &d.to_json()))
            .collect()
    }
}
