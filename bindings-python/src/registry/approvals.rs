//! The approval requests of a registry, as an approval UI reads them:
//! get, list, decide, and how a request's input may be shown. Store
//! operations run with the GIL released (`py.detach`).

use orpc_agent_core::approval::{ApprovalRequest, Decision as ApprovalDecision};
use orpc_agent_core::ffi::list_filter_from_json;
use orpc_agent_core::pipeline::ApprovalInputView;
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

    /// How an approval UI may show a request's input:
    /// `(0, capability_index, info)` — call that capability's
    /// `redact_approval_input` with `info`; `(1, None, None)` — show as
    /// stored; `(2, None, None)` — withhold (capability gone).
    fn approval_input_view<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<(u8, Option<u32>, Option<Bound<'py, PyAny>>)> {
        let json = py_to_json(request).map_err(to_py_err(py))?;
        let request = ApprovalRequest::from_view_json(json)
            .map_err(|e| PyValueError::new_err(format!("not an approval request: {e}")))?;
        Ok(match self.shared.host.approval_input_view(&request) {
            ApprovalInputView::Redact {
                capability_index,
                info,
            } => {
                let info = crate::convert::record_to_py(py, &info, "redaction info")?;
                (0, Some(capability_index), Some(info))
            }
            ApprovalInputView::AsStored => (1, None, None),
            // The core's NOT_FOUND (SI-8), as Node and Swift answer it.
            ApprovalInputView::Withhold => {
                return Err(crate::errors::capability_error(
                    py,
                    &orpc_agent_core::pipeline::gate::not_found(&request.capability_id),
                ));
            }
        })
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
