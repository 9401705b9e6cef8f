//! The approval requests of a registry on any store, from Python: a page,
//! one request, a decision — each blocking with the GIL released or, for
//! asyncio, awaited through a [`Pending`](super::Pending). What a page
//! holds and where the next starts are the core's (`ffi::next_cursor`).

use std::sync::Arc;

use orpc_agent_core::CapabilityError;
use orpc_agent_core::approval::{
    ApprovalRequest, ApprovalStore, Decision as ApprovalDecision, ListFilter,
};
use orpc_agent_core::ffi::{list_filter_from_json, next_cursor};
use pyo3::prelude::*;

use super::{block_on, spawn};
use crate::convert::py_to_json;
use crate::errors::capability_error;
use crate::registry::{NativeRegistry, request_view_to_py};

fn store_of(reg: &NativeRegistry) -> Arc<dyn ApprovalStore> {
    Arc::clone(reg.shared.host.store())
}

/// A list filter from the caller's dict, at the registry's clock.
fn list_filter(
    py: Python<'_>,
    reg: &NativeRegistry,
    filter: &Bound<'_, PyAny>,
) -> PyResult<ListFilter> {
    let now = reg.shared.now_ms(py);
    py_to_json(filter)
        .and_then(|f| list_filter_from_json(&f, now))
        .map_err(|e| capability_error(py, &e))
}

/// A request found (shown as of `now_ms`), or `None`.
fn found_to_py(py: Python<'_>, found: Option<ApprovalRequest>, now_ms: u64) -> PyResult<Py<PyAny>> {
    match found {
        Some(r) => Ok(request_view_to_py(py, &r, now_ms)?.unbind()),
        None => Ok(py.None()),
    }
}

fn page_to_py(
    py: Python<'_>,
    page: &[ApprovalRequest],
    filter: &ListFilter,
) -> PyResult<Py<PyAny>> {
    let requests: Vec<Bound<'_, PyAny>> = page
        .iter()
        .map(|r| request_view_to_py(py, r, filter.now_ms))
        .collect::<PyResult<_>>()?;
    Ok((requests, next_cursor(page, filter))
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

/// `(requests, next_cursor)` of one page; `next_cursor` is `None` on the
/// last page. Any store: a waiting one blocks with the GIL released.
#[pyfunction]
pub(super) fn approval_page(
    py: Python<'_>,
    reg: &Bound<'_, NativeRegistry>,
    filter: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let filter = list_filter(py, reg.get(), filter)?;
    let store = store_of(reg.get());
    let page = if store.waits() {
        let f = filter.clone();
        block_on(py, async move {
            store.list(&f).await.map_err(CapabilityError::from)
        })?
    } else {
        let host = &reg.get().shared.host;
        py.detach(|| host.approvals(&filter))
            .map_err(|e| capability_error(py, &e))?
    };
    page_to_py(py, &page, &filter)
}

/// [`approval_page`] without blocking: an awaitable.
#[pyfunction]
pub(super) fn approval_page_async(
    py: Python<'_>,
    reg: &Bound<'_, NativeRegistry>,
    filter: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let filter = list_filter(py, reg.get(), filter)?;
    let store = store_of(reg.get());
    let f = filter.clone();
    spawn(
        py,
        async move { store.list(&f).await.map_err(CapabilityError::from) },
        move |py, page| page_to_py(py, &page, &filter),
    )
}

/// One request (dict) or `None`, as an awaitable.
#[pyfunction]
pub(super) fn approval_get_async(
    py: Python<'_>,
    reg: &Bound<'_, NativeRegistry>,
    id: String,
) -> PyResult<Py<PyAny>> {
    let store = store_of(reg.get());
    let now = reg.get().shared.now_ms(py);
    spawn(
        py,
        async move { store.get(&id).await.map_err(CapabilityError::from) },
        move |py, found| found_to_py(py, found, now),
    )
}

/// Approve or reject (with `approverMustDiffer`), as an awaitable of the
/// decided request (dict).
#[pyfunction]
#[pyo3(signature = (reg, id, approve, approver = None, reason = None))]
pub(super) fn decide_async(
    py: Python<'_>,
    reg: &Bound<'_, NativeRegistry>,
    id: String,
    approve: bool,
    approver: Option<String>,
    reason: Option<String>,
) -> PyResult<Py<PyAny>> {
    let shared = &reg.get().shared;
    let decision = ApprovalDecision::approving(approve);
    let now = shared.now_ms(py);
    let decided = shared
        .host
        .decide_owned(id, decision, approver, reason, now);
    spawn(py, decided, move |py, r| {
        Ok(request_view_to_py(py, &r, now)?.unbind())
    })
}

/// Approve or reject, blocking with the GIL released (any store).
#[pyfunction]
#[pyo3(signature = (reg, id, approve, approver = None, reason = None))]
pub(super) fn decide_blocking(
    py: Python<'_>,
    reg: &Bound<'_, NativeRegistry>,
    id: String,
    approve: bool,
    approver: Option<String>,
    reason: Option<String>,
) -> PyResult<Py<PyAny>> {
    let shared = &reg.get().shared;
    let store = Arc::clone(shared.host.store());
    if !store.waits() {
        return Ok(reg
            .call_method1("decide", (id, approve, approver, reason))?
            .unbind());
    }
    let decision = ApprovalDecision::approving(approve);
    let now = shared.now_ms(py);
    let decided = shared
        .host
        .decide_owned(id, decision, approver, reason, now);
    let r = block_on(py, decided)?;
    Ok(request_view_to_py(py, &r, now)?.unbind())
}

/// One request or `None`, blocking with the GIL released (any store).
#[pyfunction]
pub(super) fn approval_get_blocking(
    py: Python<'_>,
    reg: &Bound<'_, NativeRegistry>,
    id: String,
) -> PyResult<Py<PyAny>> {
    let store = store_of(reg.get());
    if !store.waits() {
        return Ok(reg.call_method1("approval_get", (id,))?.unbind());
    }
    let now = reg.get().shared.now_ms(py);
    let found = block_on(py, async move {
        store.get(&id).await.map_err(CapabilityError::from)
    })?;
    found_to_py(py, found, now)
}
