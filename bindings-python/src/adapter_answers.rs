//! What the adapters tell a client or a model, written by the core
//! (`orpc_agent_core::mcp`, `orpc_agent_core::agent_tools`): MCP results,
//! in-band confirmation, and the agent frameworks' approval turn. The
//! same words as the Node adapters'; conversion only.

use orpc_agent_core::agent_tools as at;
use pyo3::prelude::*;

use crate::{convert, errors};

/// Adds this module's functions and fixed texts to `_native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mcp_error_result, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_approval_result, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_ok_result, m)?)?;
    m.add_function(wrap_pyfunction!(model_text, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_elicits, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_elicitation_params, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_elicitation_approves, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_refused_decision_resumes, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_elicitation_declined, m)?)?;
    m.add(
        "MCP_APPROVAL_ID_META",
        orpc_agent_core::mcp::APPROVAL_ID_META,
    )?;
    m.add("MCP_APPROVAL_META", orpc_agent_core::mcp::APPROVAL_META)?;
    m.add("MCP_ERROR_META", orpc_agent_core::mcp::ERROR_META)?;
    m.add_function(wrap_pyfunction!(agent_tool_approval_key, m)?)?;
    m.add_function(wrap_pyfunction!(agent_tool_made_for_tool, m)?)?;
    m.add_function(wrap_pyfunction!(agent_tool_approval_required_text, m)?)?;
    m.add_function(wrap_pyfunction!(agent_tool_recorded_approver, m)?)?;
    m.add_function(wrap_pyfunction!(agent_tool_kept_request, m)?)?;
    m.add("AGENT_TOOL_UNKNOWN_APPROVAL", at::UNKNOWN_APPROVAL_MESSAGE)?;
    m.add("AGENT_TOOL_OUTPUT_NOT_JSON", at::OUTPUT_NOT_JSON_MESSAGE)?;
    m.add("AGENT_TOOL_FAILED", at::FAILED_MESSAGE)?;
    m.add(
        "AGENT_TOOL_UNKNOWN_INTERRUPTION",
        at::UNKNOWN_INTERRUPTION_MESSAGE,
    )?;
    Ok(())
}

/// The MCP `CallToolResult` (as a dict) of a failed call, written by the
/// core (`orpc_agent_core::mcp`): the same text, hint and `_meta` as the
/// Node adapter's. An unknown code is INTERNAL.
#[pyfunction]
#[pyo3(signature = (code, message, retryable, details=None))]
fn mcp_error_result<'py>(
    py: Python<'py>,
    code: &str,
    message: &str,
    retryable: bool,
    details: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    // Details with no JSON form are left out, never a reason to fail.
    let details = details.and_then(|d| convert::py_to_json(d).ok());
    convert::json_to_py(
        py,
        &orpc_agent_core::mcp::error_result_from(code, message, retryable, details),
    )
}

/// The MCP `CallToolResult` (as a dict) of a call that returned `output`
/// (its JSON value), written by the core (`orpc_agent_core::mcp::ok_result`):
/// the same text and `structuredContent` rule as the Node adapter's.
#[pyfunction]
fn mcp_ok_result<'py>(
    py: Python<'py>,
    output: &Bound<'py, PyAny>,
    publishes_output_schema: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let output = convert::py_to_json(output).map_err(|e| errors::capability_error(py, &e))?;
    convert::json_to_py(
        py,
        &orpc_agent_core::mcp::ok_result(&output, publishes_output_schema),
    )
}

/// The text a model reads of an output (`orpc_agent_core::mcp::model_text`:
/// compact JSON with JavaScript's numbers, as Node writes it), for the agent
/// adapters, whose frameworks carry text, not a `CallToolResult`.
#[pyfunction]
fn model_text(py: Python<'_>, output: &Bound<'_, PyAny>) -> PyResult<String> {
    let output = convert::py_to_json(output).map_err(|e| errors::capability_error(py, &e))?;
    Ok(orpc_agent_core::mcp::model_text(&output))
}

/// The MCP `CallToolResult` (as a dict) of a call that needs approval;
/// `request` is the request as get, list and invoke show it.
#[pyfunction]
fn mcp_approval_result<'py>(
    py: Python<'py>,
    request: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let json = convert::py_to_json(request).map_err(|e| errors::capability_error(py, &e))?;
    let request =
        orpc_agent_core::approval::ApprovalRequest::from_view_json(json).map_err(|e| {
            pyo3::exceptions::PyValueError::new_err(format!("not an approval request: {e}"))
        })?;
    convert::json_to_py(py, &orpc_agent_core::mcp::approval_result(&request))
}

/// Whether `request` (as get, list and invoke show it) is one a tool call
/// under `frame` may take as its own (`agent_tools::made_for_tool`).
#[pyfunction]
fn agent_tool_made_for_tool(
    request: &Bound<'_, PyAny>,
    frame: PyRef<'_, crate::frame::Frame>,
    capability_id: &str,
) -> PyResult<bool> {
    let json =
        convert::py_to_json(request).map_err(|e| errors::capability_error(request.py(), &e))?;
    let request =
        orpc_agent_core::approval::ApprovalRequest::from_view_json(json).map_err(|e| {
            pyo3::exceptions::PyValueError::new_err(format!("not an approval request: {e}"))
        })?;
    Ok(at::made_for_tool(&request, &frame.core, capability_id))
}

/// In-band confirmation: whether a request of `approval_type` is put to
/// the person at the client (`mcp::elicits`).
#[pyfunction]
#[pyo3(signature = (approval_type, elicit_types, client_elicits))]
fn mcp_elicits(
    approval_type: Option<&str>,
    elicit_types: Vec<String>,
    client_elicits: bool,
) -> bool {
    orpc_agent_core::mcp::elicits(approval_type, &elicit_types, client_elicits)
}

/// The `elicitation/create` parameters (a dict) of a confirmation.
#[pyfunction]
#[pyo3(signature = (tool_name, request_id, reason, view))]
fn mcp_elicitation_params<'py>(
    py: Python<'py>,
    tool_name: &str,
    request_id: &str,
    reason: Option<&str>,
    view: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let view = convert::py_to_json(view).map_err(|e| errors::capability_error(py, &e))?;
    convert::json_to_py(
        py,
        &orpc_agent_core::mcp::elicitation_params(tool_name, request_id, reason, &view),
    )
}

/// Whether a confirmation's answer approves (`mcp::elicitation_approves`).
#[pyfunction]
fn mcp_elicitation_approves(action: &str) -> bool {
    orpc_agent_core::mcp::elicitation_approves(action)
}

/// Whether a confirmation whose decision the core refused with `code`
/// (`approves`: the person accepted) answers with the resume through the
/// tool (`orpc_agent_core::mcp::refused_decision_resumes`).
#[pyfunction]
fn mcp_refused_decision_resumes(code: &str, approves: bool) -> bool {
    orpc_agent_core::mcp::refused_decision_resumes(code, approves)
}

/// The rejection reason recorded when the person at the client declines.
#[pyfunction]
fn mcp_elicitation_declined() -> &'static str {
    orpc_agent_core::mcp::ELICITATION_DECLINED
}

/// The key under which the agent-framework adapters keep a request id
/// between the approval turn and the approved re-run
/// (`orpc_agent_core::agent_tools::approval_key`: the caller, the call id,
/// the tool and its arguments); `None` when the frame names no caller or
/// the arguments are no JSON.
#[pyfunction]
#[pyo3(signature = (actor_id, session_id, tool_call_id, tool, arguments_json))]
fn agent_tool_approval_key(
    actor_id: Option<&str>,
    session_id: Option<&str>,
    tool_call_id: &str,
    tool: &str,
    arguments_json: &str,
) -> Option<String> {
    orpc_agent_core::agent_tools::approval_key(
        actor_id,
        session_id,
        tool_call_id,
        tool,
        arguments_json,
    )
}

/// Who is recorded as the approver of a framework's approval turn
/// (`orpc_agent_core::agent_tools::recorded_approver`).
#[pyfunction]
#[pyo3(signature = (configured, actor_id))]
fn agent_tool_recorded_approver(
    configured: Option<&str>,
    actor_id: Option<&str>,
) -> Option<String> {
    orpc_agent_core::agent_tools::recorded_approver(configured, actor_id).map(str::to_owned)
}

/// What the gate does with the request kept for a tool call, by its status
/// (`None`: none in the store): `holds`, `decided` or `afresh`
/// (`orpc_agent_core::agent_tools::kept_request`).
#[pyfunction]
#[pyo3(signature = (kept, status, same_capability))]
fn agent_tool_kept_request(
    kept: bool,
    status: Option<&str>,
    same_capability: bool,
) -> &'static str {
    orpc_agent_core::agent_tools::kept_request(kept, status, same_capability).as_str()
}

/// What the model reads of a call that needs approval and had no approval
/// turn (`orpc_agent_core::agent_tools::approval_required_text`).
#[pyfunction]
#[pyo3(signature = (request_id, reason=None))]
fn agent_tool_approval_required_text(request_id: &str, reason: Option<&str>) -> String {
    orpc_agent_core::agent_tools::approval_required_text(request_id, reason)
}
