//! Core errors → Python exceptions.
//!
//! The exception classes are Python classes (`orpc_agent.errors`): one
//! subclass of `CapabilityError` per code, some also deriving from the
//! builtin a Python caller expects (`TimeoutError`, `asyncio.CancelledError`).
//! The package hands this module two factories at import time; until then
//! (or if a factory fails) a `RuntimeError` carries the code, so an error is
//! never lost.

use orpc_agent_core::{CapabilityError, RegistryError};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::convert::json_to_py;

static CAPABILITY_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static REGISTRY_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Called once by `orpc_agent/__init__.py`:
/// `capability(code, message, retryable, kind, details)` and
/// `registry(message, problems)` build the exception instances.
#[pyfunction]
pub fn _install_error_factories(
    py: Python<'_>,
    capability: Py<PyAny>,
    registry: Py<PyAny>,
) -> PyResult<()> {
    // A second install (a reloaded package) keeps the first factories.
    let _ = CAPABILITY_ERROR.set(py, capability);
    let _ = REGISTRY_ERROR.set(py, registry);
    Ok(())
}

/// The Python exception for a core `CapabilityError`.
pub fn capability_error(py: Python<'_>, e: &CapabilityError) -> PyErr {
    let made = || -> PyResult<PyErr> {
        let factory = CAPABILITY_ERROR
            .get(py)
            .ok_or_else(|| PyRuntimeError::new_err("orpc_agent is not initialised"))?;
        let details = match &e.details {
            Some(d) => json_to_py(py, d)?,
            None => py.None().into_bound(py),
        };
        let exc = factory.bind(py).call1((
            e.code.as_str(),
            e.message.as_str(),
            e.retryable,
            e.kind().as_str(),
            details,
        ))?;
        Ok(PyErr::from_value(exc))
    };
    made().unwrap_or_else(|_| PyRuntimeError::new_err(format!("{}: {}", e.code, e.message)))
}

/// The Python `RegistryValidationError` carrying every problem (SI-4).
pub fn registry_error(py: Python<'_>, e: &RegistryError) -> PyErr {
    let made = || -> PyResult<PyErr> {
        let factory = REGISTRY_ERROR
            .get(py)
            .ok_or_else(|| PyRuntimeError::new_err("orpc_agent is not initialised"))?;
        let json = orpc_agent_core::ffi::registry_error_json(e);
        let problems = json_to_py(py, &json["problems"])?;
        let exc = factory.bind(py).call1((e.to_string(), problems))?;
        Ok(PyErr::from_value(exc))
    };
    made().unwrap_or_else(|_| PyValueError::new_err(e.to_string()))
}

/// Drops a Python error this crate swallows, attached as pyo3 counts it.
/// The awaitable's first send runs without pyo3's attach
/// (`awaitable::guard::guarded_first`), where dropping a `PyErr` would leave its
/// exception, type and traceback in pyo3's pool until the next entry into
/// pyo3. Only error paths pay for the attach.
pub fn drop_attached(e: PyErr) {
    Python::attach(|_| drop(e));
}

/// Reports `e` through `sys.unraisablehook` for `what`, attached as pyo3
/// counts it (see `drop_attached`): a lazy error's restore drops its parts.
pub fn unraisable(e: PyErr, what: &Bound<'_, PyAny>) {
    Python::attach(|py| e.write_unraisable(py, Some(what)));
}
