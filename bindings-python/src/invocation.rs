//! `Invocation`: one governed call, driven by the asyncio loop in
//! `orpc_agent/_driver.py`.
//!
//! Every method is a synchronous crossing that feeds one answer to the
//! core's state machine and returns the kind of the next step the *host*
//! must perform, as a small integer (`StepKind`); the steps the host need
//! not see are performed inside the same crossing (`drive.rs`). Payloads
//! stay Python objects (`Payload::Host`); the core asks for JSON only
//! through the export steps.

mod drive;
mod step_view;

use std::sync::Arc;

use orpc_agent_core::ffi;
use orpc_agent_core::pipeline::Answer;
use orpc_agent_core::pipeline::progress::ProgressChecker;
use orpc_agent_core::{CapabilityError, ErrorCode, Invocation as CoreInvocation, Outcome};
use pyo3::prelude::*;

use crate::convert::py_to_json;
use crate::errors::capability_error;
use crate::host_answers::{count, policy_answer};
use crate::registry::{Shared, request_to_py};

/// Returned instead of `Done` when the invocation ended ok with the output
/// held by the host: the outcome is already taken, nothing to `finish`.
pub const DONE_OK: u8 = orpc_agent_core::ffi::sentinel::DONE_OK_HOST;

#[pyclass(module = "orpc_agent._native", name = "Invocation")]
pub struct Invocation {
    shared: Arc<Shared>,
    /// Inline, not boxed: on the fast path (`NativeRegistry::invoke_fast`)
    /// this struct lives on the Rust stack and is dropped there, so a call
    /// that finishes in one crossing allocates nothing for it; only a call
    /// handed back to Python moves it into a Python object.
    inv: CoreInvocation,
    resumed: bool,
    /// The handler's progress reports so far (`progress`).
    progress: ProgressChecker,
    /// A step that may have taken a while (the input validator, any hook
    /// answered through `answer`, an awaited host policy, an audit
    /// delivery) ran since the start: check the deadline before a handler
    /// starts.
    waited: bool,
}

#[pymethods]
impl Invocation {
    /// A progress report of the handler, checked by the core
    /// (`pipeline::progress`: `done` increases, `done <= total`, a total
    /// is fixed once given). The accepted event as `(done, total)`, or
    /// `None` when it is dropped (not a count, or against the rules).
    #[pyo3(signature = (done, total = None))]
    fn progress(
        &mut self,
        done: &Bound<'_, PyAny>,
        total: Option<&Bound<'_, PyAny>>,
    ) -> Option<(u64, Option<u64>)> {
        let done = count(done)?;
        let total = match total {
            Some(t) => Some(count(t)?),
            None => None,
        };
        self.progress
            .report(done, total)
            .ok()
            .map(|e| (e.done, e.total))
    }

    /// The first step the host must perform.
    fn advance(&mut self, py: Python<'_>) -> PyResult<u8> {
        self.next(py)
    }

    /// The step again, the time told first: a host that waited before
    /// acting on `RunHandler` (an agent adapter holding a gated call until
    /// its framework runs it) asks this before it starts the handler, so
    /// one whose deadline passed meanwhile is timed out, never started.
    fn advance_at(&mut self, py: Python<'_>) -> PyResult<u8> {
        self.waited = true;
        self.next(py)
    }

    // ----- answers: each returns the next step's kind ---------------------

    /// Any answer without more than one text and one flag, by its code
    /// (`ffi::answer_code`, the module's `ANSWER_*`), at the registry's
    /// clock; the core reads it (`ffi::answer`), and one it cannot read
    /// ends the call INTERNAL. `flag` is `RetryOn`'s verdict: only the
    /// boolean `True` is a yes.
    #[pyo3(signature = (code, text = None, flag = None))]
    fn answer(
        &mut self,
        py: Python<'_>,
        code: u8,
        text: Option<String>,
        flag: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u8> {
        let yes = flag.is_some_and(|f| f.cast::<pyo3::types::PyBool>().is_ok_and(|b| b.is_true()));
        // A hook may have run for as long as it took: the machine is told
        // the time before a handler starts (SI-9).
        self.waited = true;
        let now_ms = self.now(py);
        self.feed(py, ffi::answer(code, text, yes, now_ms))
    }

    /// `kind`: the decision's code (`ffi::decision_code`, the module's
    /// `DECISION_CODE`).
    #[pyo3(signature = (kind, reason = None, approval_type = None, expires_in_ms = None))]
    fn policy_decision(
        &mut self,
        py: Python<'_>,
        kind: u8,
        reason: Option<&Bound<'_, PyAny>>,
        approval_type: Option<&Bound<'_, PyAny>>,
        expires_in_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u8> {
        let answer = policy_answer(kind, reason, approval_type, expires_in_ms);
        self.waited = true;
        self.feed(py, answer)
    }

    /// The validated input as JSON-model Python values (the core asked for
    /// it). A value with no JSON form (NaN, bytes, a 65-bit integer…) ends the
    /// call as the core decides (INVALID_INPUT), with an audit record.
    fn input_exported(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<u8> {
        self.feed(py, Answer::input_exported(py_to_json(value)))
    }

    /// The redacted output for the audit record (only with audit
    /// payloads). An output with no JSON form is recorded as `null`, as the
    /// Node binding does: the call's outcome stands.
    fn output_exported(&mut self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<u8> {
        self.feed(py, Answer::output_exported(py_to_json(value).ok()))
    }

    /// The handler raised (`ffi::handler_error_with`): with `code`, its own
    /// CapabilityError and its `details` (left out when they have no JSON
    /// form; the core judges their size); without (or an unknown code), a
    /// plain exception whose message never leaves.
    #[pyo3(signature = (code, message, retryable, details=None))]
    fn handler_error(
        &mut self,
        py: Python<'_>,
        code: Option<&str>,
        message: String,
        retryable: bool,
        details: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u8> {
        let now_ms = self.now(py);
        let details = details.and_then(|d| py_to_json(d).ok());
        self.feed(
            py,
            ffi::handler_error_with(code, message, retryable, details, now_ms),
        )
    }

    /// The driver failed on the current step (an exception of its own): the
    /// core ends the call (INTERNAL, unless its outcome was settled) and its
    /// finished audit record is delivered here.
    fn abandon(&mut self, py: Python<'_>) -> PyResult<u8> {
        let now_ms = self.now(py);
        let _ = self.inv.abandon(now_ms); // `next` delivers the record it owes
        self.next(py)
    }

    /// The outcome, once the step is `Done`: `None` for ok (the host holds
    /// the output), the approval request dict for approval-required, or
    /// the CapabilityError raised.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.inv.take_outcome() {
            Some(Outcome::Ok(_)) => Ok(None),
            Some(Outcome::ApprovalRequired(request)) => request_to_py(py, &request).map(Some),
            Some(Outcome::Error(e)) => Err(capability_error(py, &e)),
            None => Err(capability_error(
                py,
                &CapabilityError::new(ErrorCode::Internal, "the invocation has no outcome yet"),
            )),
        }
    }
}
