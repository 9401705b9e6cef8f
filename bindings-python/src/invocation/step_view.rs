//! What the current step shows the host: the capability, the attempt,
//! the deadlines and waits it arms timers with, where a policy sits, and
//! the values the core holds for the step (the frozen frame, the redaction
//! info, a stored input, the error `retry_on` judges). Reads only: nothing
//! here answers the machine.

use orpc_agent_core::ffi;
use orpc_agent_core::pipeline::{PolicyScope, Step};
use pyo3::prelude::*;

use super::Invocation;
use crate::convert::json_to_py;
use crate::errors::capability_error;

#[pymethods]
impl Invocation {
    /// Index of the resolved capability, or `None` (NOT_FOUND).
    #[getter]
    fn capability_index(&self) -> Option<u32> {
        self.inv.capability().map(|c| c.index)
    }

    #[getter]
    fn capability_id(&self) -> Option<String> {
        self.inv.capability().map(|c| c.id.clone())
    }

    #[getter]
    fn resumed(&self) -> bool {
        self.resumed
    }

    /// `RunHandler`: attempt number, 1-based.
    #[getter]
    fn attempt(&self) -> u32 {
        self.inv.attempt()
    }

    #[getter]
    fn deadline_at_ms(&self) -> u64 {
        self.inv.deadline_at_ms()
    }

    /// Seconds until the call's deadline (`Invocation::call_deadline_ms`),
    /// which bounds every hook the driver awaits.
    fn call_remaining_s(&self, py: Python<'_>) -> f64 {
        let left = self.inv.call_deadline_ms().saturating_sub(self.now(py));
        left as f64 / 1000.0
    }

    /// Seconds until the deadline, for arming the host's timer.
    fn remaining_s(&self, py: Python<'_>) -> f64 {
        let left = self.inv.deadline_at_ms().saturating_sub(self.now(py));
        // Millisecond counts are far below 2^52: exact as f64.
        left as f64 / 1000.0
    }

    /// `Sleep`: seconds to wait.
    fn sleep_s(&self) -> f64 {
        self.inv.sleep_ms() as f64 / 1000.0
    }

    /// `EvaluatePolicy`: `(scope, index, timeout_s)`, scope 0 = runtime, 1 = capability.
    fn policy_at(&self) -> Option<(u8, u32, f64)> {
        self.inv.policy_at().map(|(scope, index)| {
            let scope = u8::from(scope == PolicyScope::Capability);
            (scope, index, self.inv.policy_timeout_ms() as f64 / 1000.0)
        })
    }

    /// The frozen frame as the core sees it (on resume: the recorded
    /// surface and actor): `{surface, actor, trace?, requestId?, …}`.
    fn frame<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::convert::record_to_py(py, &self.inv.frame(), "frame")
    }

    /// What redactors are told: `{surface, capabilityId, actor}`.
    fn redaction_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::convert::record_to_py(py, &self.inv.redaction_info(), "redaction info")
    }

    /// The value the current step shows when the core holds it as JSON
    /// (`ffi::step_json`; read at `RunHandler` on resume: the stored
    /// validated input, which the host turns back into its own type).
    /// `None` when the host holds it.
    fn input_json<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        ffi::step_json(&self.inv)
            .map(|v| json_to_py(py, v))
            .transpose()
    }

    /// `AskRetryOn`: the error, as the exception the host's `retry_on` sees.
    fn retry_error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        match self.inv.step() {
            Step::AskRetryOn { error } => {
                Some(capability_error(py, error).into_value(py).into_any())
            }
            _ => None,
        }
    }
}
