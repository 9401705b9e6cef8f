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

    /// The output's type, not its value: the output may carry anything the
    /// capability returned (redacted for the model, not for logs), and an
    /// outcome is often logged whole.
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let ty = self.output.bind(py).get_type().qualname()?;
        Ok(format!("InvokeOk(status='ok', output=<{ty}>)"))
    }
}
