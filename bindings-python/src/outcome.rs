//! `InvokeOk`: the ok outcome of `registry.invoke`, made here so the hot
//! path ends without a Python-level object construction (DESIGN §11).

use pyo3::prelude::*;
use pyo3::types::PyString;

/// The call ran; `output` is the (redacted) output.
#[pyclass(module = "orpc_agent._native", name = "InvokeOk", frozen, generic)]
pub struct InvokeOk {
    output: Py<PyAny>,
}

impl InvokeOk {
    pub fn of(output: Py<PyAny>) -> InvokeOk {
        InvokeOk { output }
    }
}

#[pymethods]
impl InvokeOk {
    #[new]
    fn new(output: Py<PyAny>) -> InvokeOk {
        InvokeOk { output }
    }

    #[getter]
    fn output(&self, py: Python<'_>) -> Py<PyAny> {
        self.output.clone_ref(py)
    }

    /// Always `"ok"` (an `ApprovalRequired` outcome says `"approval_required"`).
    #[getter]
    fn status<'py>(&self, py: Python<'py>) -> Bound<'py, PyString> {
        pyo3::intern!(py, "ok").clone()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("InvokeOk(output={})", self.output.bind(py).repr()?))
    }
}
