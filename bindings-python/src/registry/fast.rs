//! The eager fast path (DESIGN §4): a governed call that needs no await
//! runs in one crossing — start, input validator, one synchronous step of
//! the handler's coroutine, output validator — with the host callables
//! each capability's [`FastPath`] holds.

use std::sync::Arc;

use orpc_agent_core::Invocation as CoreInvocation;
use orpc_agent_core::pipeline::StepKind;
use pyo3::exceptions::asyncio::CancelledError;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::gc::{PyTraverseError, PyVisit};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{HANDLER_RAISED, NativeRegistry, SUSPENDED, VALIDATOR_RAISED};
use crate::eager;
use crate::frame::Frame;
use crate::invocation::{DONE_OK, Invocation};
use crate::limits;
use crate::outcome::InvokeOk;

/// The host callables the fast path performs steps with, per capability
/// (each `None` when the capability has no such step for the fast path).
///
/// One object per name in `fast_paths`, made once by `set_fast_paths`: the
/// hot path reads its fields in place (a type check and borrows), where a
/// tuple cost four item reads, their reference counts and an int
/// extraction per call.
#[pyclass(module = "orpc_agent._native", name = "FastPath", frozen)]
struct FastPath {
    index: u32,
    validate_input: Option<Py<PyAny>>,
    handler: Option<Py<PyAny>>,
    validate_output: Option<Py<PyAny>>,
}

#[pymethods]
impl FastPath {
    /// Its callables, for the garbage collector (a handler that refers back
    /// to its registry makes a cycle through this object).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.validate_input)?;
        visit.call(&self.handler)?;
        visit.call(&self.validate_output)
    }
}

/// A fast path as the Python registry gives it: exactly a 4-tuple.
type FastPathEntry = (u32, Option<Py<PyAny>>, Option<Py<PyAny>>, Option<Py<PyAny>>);

impl FastPath {
    /// From the Python registry's `(index, validate | None, eager handler |
    /// None, validate output | None)`.
    fn from_entry(entry: &Bound<'_, PyAny>) -> PyResult<FastPath> {
        let (index, validate_input, handler, validate_output): FastPathEntry = entry.extract()?;
        Ok(FastPath {
            index,
            validate_input,
            handler,
            validate_output,
        })
    }
}

#[pymethods]
impl NativeRegistry {
    /// The hot path in one crossing (DESIGN §4): resolve `name` among the
    /// fast paths (`None` when it is not one: the host starts it by name),
    /// start the capability, and while the steps are the common ones,
    /// perform them with the host callables given — `validate(input)` for
    /// `ValidateInput`, one synchronous step of `handler(value)`'s
    /// coroutine for `RunHandler`. Returns the `InvokeOk` itself when the
    /// call finished (the common case, no tuple to build and unpack), else
    /// `(invocation, kind, a, b)`:
    ///
    /// - a step kind: `(inv, kind, value, output)` — continue the loop;
    /// - `SUSPENDED`: `(inv, SUSPENDED, value, (coroutine, yielded))`;
    /// - `VALIDATOR_RAISED` / `HANDLER_RAISED`: `(inv, code, value, exception)`.
    ///
    /// Rust never awaits: a suspended coroutine goes back to the host's loop.
    pub(crate) fn invoke_fast<'py>(
        &self,
        py: Python<'py>,
        name: &Bound<'py, PyAny>,
        frame: &Frame,
        input: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(entry) = self
            .fast_paths
            .get()
            .map(|d| d.bind(py).get_item(name))
            .transpose()?
            .flatten()
        else {
            return Ok(py.None().into_bound(py));
        };
        let path = entry.cast_into_exact::<FastPath>()?;
        self.run_fast(py, path.get(), frame, input)
    }

    /// Sets the names `invoke_fast` resolves (once):
    /// `{name: (index, validate input | None, eager handler | None, validate output | None)}`.
    fn set_fast_paths(&self, paths: Bound<'_, PyDict>) -> PyResult<()> {
        let py = paths.py();
        let resolved = PyDict::new(py);
        for (name, entry) in paths.iter() {
            resolved.set_item(name, Bound::new(py, FastPath::from_entry(&entry)?)?)?;
        }
        self.fast_paths
            .set(resolved.unbind())
            .map_err(|_| PyValueError::new_err("fast paths are already set"))
    }
}

impl NativeRegistry {
    /// Starts an invocation of the capability at `index` (hot path) with
    /// the raw `input` (measured against the input limits before any step).
    /// Returned by value and built in the caller's slot: the invocation is
    /// a few hundred bytes, and each move of it was a copy on every call.
    #[inline(always)]
    fn start_index(
        &self,
        py: Python<'_>,
        index: u32,
        frame: &Frame,
        input: &Bound<'_, PyAny>,
    ) -> Invocation {
        let opts = self.shared.options(py);
        Invocation::new(
            Arc::clone(&self.shared),
            CoreInvocation::start_index_measured(
                Arc::clone(self.shared.host.registry()),
                index,
                Arc::clone(&frame.core),
                opts,
                Some(limits::measure(input)),
            ),
            false,
        )
    }

    /// The body of `invoke_fast` once the name is resolved to its fast path.
    fn run_fast<'py>(
        &self,
        py: Python<'py>,
        path: &FastPath,
        frame: &Frame,
        input: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let validate = path.validate_input.as_ref().map(|v| v.bind(py));
        let handler = path.handler.as_ref().map(|h| h.bind(py));
        let validate_output = path.validate_output.as_ref().map(|v| v.bind(py));
        let step = |inv: Invocation, kind: u8, a: Bound<'py, PyAny>, b: Bound<'py, PyAny>| {
            (inv, kind, a, b).into_pyobject(py).map(Bound::into_any)
        };
        let none = || py.None().into_bound(py);
        let mut inv = self.start_index(py, path.index, frame, &input);
        let mut kind = inv.first_step(py)?;
        let mut value = input;
        if kind == StepKind::ValidateInput.as_u8()
            && let Some(validate) = validate
        {
            match eager::call_one(validate, &value) {
                Ok(v) => {
                    value = v;
                    kind = inv.input_valid(py)?;
                }
                Err(e) => {
                    let raised = e.into_value(py).into_bound(py).into_any();
                    return step(inv, VALIDATOR_RAISED, none(), raised);
                }
            }
        }
        let Some(handler) = handler.filter(|_| kind == StepKind::RunHandler.as_u8()) else {
            return step(inv, kind, value, none());
        };
        let stepped = eager::call_one(handler, &value)
            .and_then(|coro| eager::send_none(&coro).map(|sent| (coro, sent)));
        match stepped {
            Ok((_, eager::Sent::Returned(mut output))) => {
                kind = inv.handler_ok(py)?;
                if kind == StepKind::ValidateOutput.as_u8()
                    && let Some(validate_output) = validate_output
                {
                    // As the driver loop's step: any `Exception`, or a
                    // `CancelledError` the validator raised itself
                    // (`APP_FAILURES`), is an invalid output (its text
                    // stays here); anything else (KeyboardInterrupt) goes
                    // up, as from the input's validator.
                    match eager::call_one(validate_output, &output) {
                        Ok(valid) => {
                            output = valid;
                            kind = inv.output_valid(py)?;
                        }
                        Err(e)
                            if e.is_instance_of::<PyException>(py)
                                || e.is_instance_of::<CancelledError>(py) =>
                        {
                            output = none();
                            kind = inv.output_invalid(py)?;
                        }
                        Err(e) => {
                            let raised = e.into_value(py).into_bound(py).into_any();
                            return step(inv, VALIDATOR_RAISED, none(), raised);
                        }
                    }
                }
                if kind == DONE_OK {
                    return Ok(Bound::new(py, InvokeOk::of(output.unbind()))?.into_any());
                }
                step(inv, kind, value, output)
            }
            Ok((coro, eager::Sent::Yielded(first))) => {
                let pending = (coro, first).into_pyobject(py)?.into_any();
                step(inv, SUSPENDED, value, pending)
            }
            Err(e) => {
                let raised = e.into_value(py).into_bound(py).into_any();
                step(inv, HANDLER_RAISED, value, raised)
            }
        }
    }
}
