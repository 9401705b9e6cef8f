//! The approval requests of a registry, as an approval UI reads them:
//! get, list, decide, and how a request's input may be shown. Store
//! operations run with the GIL released (`py.detach`).

use orpc_agent_core::approval::{ApprovalRequest, Decision as ApprovalDecision};
use orpc_agent_core::ffi::list_filter_from_json;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::{NativeRegistry, to_py_err};
use crate::convert::{json_to_py, py_to_json};

#[pymethods]
impl NativeRegistry {
    /// One approval request as a dict, or `None`.
    fn approval_get<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let host = &self.shared.host;
        let found = py.detach(|| host.approval(id)).map_err(to_py_err(py))?;
        let now = self.shared.now_ms(py);
        found.map(|r| request_view_to_py(py, &r, now)).transpose()
    }

    /// A page of approval requests: filter `{capabilityId?, actorId?, surface?, status?, limit?, cursor?}`.
    fn approval_list<'py>(
        &self,
        py: Python<'py>,
        filter: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let filter = py_to_json(filter).map_err(to_py_err(py))?;
        let now = self.shared.now_ms(py);
        let filter = list_filter_from_json(&filter, now).map_err(to_py_err(py))?;
        let host = &self.shared.host;
        let page = py
            .detach(|| host.approvals(&filter))
            .map_err(to_py_err(py))?;
        page.iter()
            .map(|r| request_view_to_py(py, r, now))
            .collect()
    }

    /// Approves (`approve=True`) or rejects a pending request.
    #[pyo3(signature = (id, approve, approver = None, reason = None))]
    fn decide<'py>(
        &self,
        py: Python<'py>,
        id: &str,
        approve: bool,
        approver: Option<&str>,
        reason: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let decision = ApprovalDecision::approving(approve);
        let now = self.shared.now_ms(py);
        let host = &self.shared.host;
        let decided = py
            .detach(|| host.decide(id, decision, approver, reason, now))
            .map_err(to_py_err(py))?;
        request_view_to_py(py, &decided, now)
    }

    /// How an approval UI may show a request's input: `(code,
    /// capability_index, info, timeout_ms)`, `code` one of the core's
    /// `ffi::approval_view_code` (`APPROVAL_VIEW_AS_STORED`: show as
    /// stored; `APPROVAL_VIEW_REDACT`: call that capability's
    /// `redact_approval_input` with `info`). A request whose capability is
    /// gone raises the core's NOT_FOUND (SI-8), as in Node and Swift.
    fn approval_input_view<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<(u8, u32, Option<Bound<'py, PyAny>>, u64)> {
        let json = py_to_json(request).map_err(to_py_err(py))?;
        let request = ApprovalRequest::from_view_json(json)
            .map_err(|e| PyValueError::new_err(format!("not an approval request: {e}")))?;
        let view = self
            .shared
            .host
            .approval_view(&request)
            .map_err(|e| crate::errors::capability_error(py, &e))?;
        let info = match &view.info {
            Some(info) => Some(crate::convert::record_to_py(py, info, "redaction info")?),
            None => None,
        };
        // `timeout_ms`: how long the redactor may take (the core's bound).
        Ok((view.code, view.capability_index, info, view.timeout_ms))
    }
}

pub(crate) fn request_to_py<'py>(
    py: Python<'py>,
    r: &ApprovalRequest,
) -> PyResult<Bound<'py, PyAny>> {
    json_to_py(py, &r.to_json())
}

/// A request as an approval UI reads it at `now_ms` (`status` the
/// effective one: `expired` past its expiry).
pub(crate) fn request_view_to_py<'py>(
    py: Python<'py>,
    r: &ApprovalRequest,
    now_ms: u64,
) -> PyResult<Bound<'py, PyAny>> {
    json_to_py(py, &r.to_json_at(now_ms))
}
