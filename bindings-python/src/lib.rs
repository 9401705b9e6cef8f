//! `orpc_agent._native`: the Python binding's native module.
//!
//! Thin by design (DESIGN §1, §4): conversions between Python values and
//! the core's types, error mapping, and the synchronous crossings of the
//! asyncio driver loop in `python/orpc_agent/_driver.py`. Every governance
//! decision is the core's (`orpc-agent-core`).

mod audit;
mod awaitable;
mod convert;
mod eager;
mod errors;
mod frame;
mod invocation;
mod limits;
mod outcome;
mod postgres;
mod registry;
mod telemetry;

use orpc_agent_core::act::deterministic::MAX_HASH_DEPTH;
use orpc_agent_core::act::hash_cbor_input;
use orpc_agent_core::pipeline::StepKind;
use orpc_agent_core::{CapabilityError, ErrorCode, all_error_codes as core_error_codes};
use pyo3::prelude::*;

/// Every error code the core can raise, in the core's order (drift tests).
#[pyfunction]
fn all_error_codes() -> Vec<&'static str> {
    core_error_codes()
}

/// The `std:` error kind of a code, or `None` for an unknown code.
#[pyfunction]
fn error_kind(code: &str) -> Option<&'static str> {
    ErrorCode::parse(code).map(|c| c.kind().as_str())
}

/// Whether errors with `code` are retryable by default.
#[pyfunction]
fn default_retryable(code: &str) -> Option<bool> {
    ErrorCode::parse(code).map(|c| c.default_retryable())
}

/// The approval input hash (DESIGN §5) of a Python value: lowercase hex
/// SHA-256 of the deterministic CBOR of `{"capability", "input"}`.
#[pyfunction]
fn input_hash(py: Python<'_>, capability_id: &str, input: &Bound<'_, PyAny>) -> PyResult<String> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let value = convert::py_to_cbor(input).map_err(fail)?;
    hash_cbor_input(capability_id, &value).map_err(|e| fail(e.into()))
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

/// The rejection reason recorded when the person at the client declines.
#[pyfunction]
fn mcp_elicitation_declined() -> &'static str {
    orpc_agent_core::mcp::ELICITATION_DECLINED
}

/// The key under which the agent-framework adapters keep a request id
/// between the approval turn and the approved re-run
/// (`orpc_agent_core::agent_tools::approval_key`); `None` when the frame
/// names no caller.
#[pyfunction]
#[pyo3(signature = (actor_id, session_id, tool_call_id))]
fn agent_tool_approval_key(
    actor_id: Option<&str>,
    session_id: Option<&str>,
    tool_call_id: &str,
) -> Option<String> {
    orpc_agent_core::agent_tools::approval_key(actor_id, session_id, tool_call_id)
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

/// Whether a kept request (by its status) still holds its tool call
/// (`orpc_agent_core::agent_tools::kept_request_holds_the_call`).
#[pyfunction]
fn agent_tool_kept_request_holds_the_call(status: &str) -> bool {
    orpc_agent_core::agent_tools::kept_request_holds_the_call(status)
}

/// What the model reads of a call that needs approval and had no approval
/// turn (`orpc_agent_core::agent_tools::approval_required_text`).
#[pyfunction]
#[pyo3(signature = (request_id, reason=None))]
fn agent_tool_approval_required_text(request_id: &str, reason: Option<&str>) -> String {
    orpc_agent_core::agent_tools::approval_required_text(request_id, reason)
}

/// The JSON view (a dict) of a CBOR `std:` metadata map
/// (`orpc_agent_core::ffi::act::meta_decode`).
#[pyfunction]
fn std_meta_decode<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let view = orpc_agent_core::ffi::act::meta_decode(data)
        .map_err(|e| errors::capability_error(py, &e))?;
    convert::json_to_py(py, &view)
}

/// The deterministic CBOR of a metadata map given in the JSON view.
#[pyfunction]
fn std_meta_encode<'py>(
    py: Python<'py>,
    meta: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let view = convert::py_to_json(meta).map_err(fail)?;
    let bytes = orpc_agent_core::ffi::act::meta_encode(&view).map_err(fail)?;
    Ok(pyo3::types::PyBytes::new(py, &bytes))
}

/// The problems (dicts) of a metadata map at a position.
#[pyfunction]
#[pyo3(signature = (data, position, strict=false))]
fn std_meta_check<'py>(
    py: Python<'py>,
    data: &[u8],
    position: &str,
    strict: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let problems = orpc_agent_core::ffi::act::meta_check(data, position, strict)
        .map_err(|e| errors::capability_error(py, &e))?;
    convert::json_to_py(py, &serde_json::Value::Array(problems))
}

/// The `act:component` metadata (a dict) of a WebAssembly component.
#[pyfunction]
fn act_component_inspect<'py>(py: Python<'py>, wasm: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let v = orpc_agent_core::ffi::act::component_inspect(wasm)
        .map_err(|e| errors::capability_error(py, &e))?;
    convert::json_to_py(py, &v)
}

/// The component with the `act:component` section a manifest describes.
#[pyfunction]
#[pyo3(signature = (manifest, wasm, manifest_name="act.toml"))]
fn act_component_embed<'py>(
    py: Python<'py>,
    manifest: &str,
    wasm: &[u8],
    manifest_name: &str,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let bytes = orpc_agent_core::ffi::act::component_embed(manifest, manifest_name, wasm)
        .map_err(|e| errors::capability_error(py, &e))?;
    Ok(pyo3::types::PyBytes::new(py, &bytes))
}

/// An `act.toml` manifest checked: the metadata it describes (a dict).
#[pyfunction]
#[pyo3(signature = (manifest, manifest_name="act.toml"))]
fn act_manifest_check<'py>(
    py: Python<'py>,
    manifest: &str,
    manifest_name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let v = orpc_agent_core::ffi::act::manifest_check(manifest, manifest_name)
        .map_err(|e| errors::capability_error(py, &e))?;
    convert::json_to_py(py, &v)
}

/// `std:forward` over a chain of hops (metadata maps in the JSON view).
#[pyfunction]
fn std_forward_wrap<'py>(py: Python<'py>, hops: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let hops = convert::py_to_json(hops).map_err(fail)?;
    let v = orpc_agent_core::ffi::act::forward_wrap(&hops).map_err(fail)?;
    convert::json_to_py(py, &v)
}

/// One `std:forward` layer unwrapped: `{"here": ..., "next": ... | None}`.
#[pyfunction]
fn std_forward_unwrap<'py>(
    py: Python<'py>,
    meta: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let meta = convert::py_to_json(meta).map_err(fail)?;
    let v = orpc_agent_core::ffi::act::forward_unwrap(&meta).map_err(fail)?;
    convert::json_to_py(py, &v)
}

/// A capability-class use decided against a component's declarations and
/// the host's grants: `{"allowed": ..., "reason"?, "message"?}`.
#[pyfunction]
fn capability_grant_decide<'py>(
    py: Python<'py>,
    declared: &Bound<'py, PyAny>,
    grants: &Bound<'py, PyAny>,
    request: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let declared = convert::py_to_json(declared).map_err(fail)?;
    let grants = convert::py_to_json(grants).map_err(fail)?;
    let request = convert::py_to_json(request).map_err(fail)?;
    let v = orpc_agent_core::ffi::act::grant_decide(&declared, &grants, &request).map_err(fail)?;
    convert::json_to_py(py, &v)
}

/// The tool-definition metadata (JSON view) a capability's agent metadata states.
#[pyfunction]
fn std_tool_definition_meta<'py>(
    py: Python<'py>,
    capability_id: &str,
    meta: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let fail = |e: CapabilityError| errors::capability_error(py, &e);
    let meta = convert::py_to_json(meta).map_err(fail)?;
    let v = orpc_agent_core::ffi::act::tool_definition_meta(capability_id, &meta).map_err(fail)?;
    convert::json_to_py(py, &v)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<frame::Frame>()?;
    m.add_class::<registry::NativeRegistry>()?;
    m.add_class::<invocation::Invocation>()?;
    m.add_class::<outcome::InvokeOk>()?;
    m.add("GovernedCall", awaitable::call_type(m.py())?)?;
    m.add_function(wrap_pyfunction!(errors::_install_error_factories, m)?)?;
    m.add_function(wrap_pyfunction!(all_error_codes, m)?)?;
    m.add_function(wrap_pyfunction!(error_kind, m)?)?;
    m.add_function(wrap_pyfunction!(default_retryable, m)?)?;
    m.add_function(wrap_pyfunction!(input_hash, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_error_result, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_approval_result, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_ok_result, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_elicits, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_elicitation_params, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_elicitation_approves, m)?)?;
    m.add_function(wrap_pyfunction!(mcp_elicitation_declined, m)?)?;
    m.add(
        "MCP_APPROVAL_ID_META",
        orpc_agent_core::mcp::APPROVAL_ID_META,
    )?;
    m.add("MCP_APPROVAL_META", orpc_agent_core::mcp::APPROVAL_META)?;
    m.add("MCP_ERROR_META", orpc_agent_core::mcp::ERROR_META)?;
    m.add_function(wrap_pyfunction!(agent_tool_approval_key, m)?)?;
    m.add_function(wrap_pyfunction!(std_meta_decode, m)?)?;
    m.add_function(wrap_pyfunction!(std_meta_encode, m)?)?;
    m.add_function(wrap_pyfunction!(std_meta_check, m)?)?;
    m.add_function(wrap_pyfunction!(act_component_inspect, m)?)?;
    m.add_function(wrap_pyfunction!(act_component_embed, m)?)?;
    m.add_function(wrap_pyfunction!(act_manifest_check, m)?)?;
    m.add_function(wrap_pyfunction!(std_forward_wrap, m)?)?;
    m.add_function(wrap_pyfunction!(std_forward_unwrap, m)?)?;
    m.add_function(wrap_pyfunction!(capability_grant_decide, m)?)?;
    m.add_function(wrap_pyfunction!(std_tool_definition_meta, m)?)?;
    m.add_function(wrap_pyfunction!(agent_tool_approval_required_text, m)?)?;
    m.add_function(wrap_pyfunction!(agent_tool_recorded_approver, m)?)?;
    m.add_function(wrap_pyfunction!(agent_tool_kept_request_holds_the_call, m)?)?;
    {
        use orpc_agent_core::agent_tools as at;
        m.add("AGENT_TOOL_UNKNOWN_APPROVAL", at::UNKNOWN_APPROVAL_MESSAGE)?;
        m.add("AGENT_TOOL_OUTPUT_NOT_JSON", at::OUTPUT_NOT_JSON_MESSAGE)?;
        m.add("AGENT_TOOL_FAILED", at::FAILED_MESSAGE)?;
        m.add(
            "AGENT_TOOL_UNKNOWN_INTERRUPTION",
            at::UNKNOWN_INTERRUPTION_MESSAGE,
        )?;
    }
    postgres::register(m)?;
    telemetry::register(m)?;
    m.add("MAX_HASH_DEPTH", MAX_HASH_DEPTH)?;
    m.add("INTERNAL_MESSAGE", orpc_agent_core::error::INTERNAL_MESSAGE)?;
    m.add(
        "APPROVAL_VIEW_FAILED_MESSAGE",
        orpc_agent_core::pipeline::redaction::APPROVAL_VIEW_FAILED_MESSAGE,
    )?;
    let decision_codes = pyo3::types::PyDict::new(m.py());
    for code in orpc_agent_core::ffi::decision_code::ALL {
        decision_codes.set_item(orpc_agent_core::ffi::decision_code::name(code), code)?;
    }
    m.add("DECISION_CODE", decision_codes)?;
    // Answer codes, as `Invocation.answer` takes them: `ANSWER_INPUT_VALID`…
    for (code, name) in orpc_agent_core::ffi::answer_code::ALL {
        let mut constant = String::from("ANSWER");
        for c in name.chars() {
            if c.is_ascii_uppercase() {
                constant.push('_');
            }
            constant.push(c.to_ascii_uppercase());
        }
        m.add(constant.as_str(), code)?;
    }
    m.add("DONE_OK", invocation::DONE_OK)?;
    m.add("SUSPENDED", registry::SUSPENDED)?;
    m.add("VALIDATOR_RAISED", registry::VALIDATOR_RAISED)?;
    m.add("HANDLER_RAISED", registry::HANDLER_RAISED)?;
    // Step kinds, as the driver loop compares them.
    for (name, kind) in [
        ("VALIDATE_INPUT", StepKind::ValidateInput),
        ("EVALUATE_POLICY", StepKind::EvaluatePolicy),
        ("EXPORT_INPUT", StepKind::ExportInput),
        ("PERSIST_APPROVAL", StepKind::PersistApproval),
        ("CONSUME_APPROVAL", StepKind::ConsumeApproval),
        ("RUN_HANDLER", StepKind::RunHandler),
        ("ASK_RETRY_ON", StepKind::AskRetryOn),
        ("SLEEP", StepKind::Sleep),
        ("VALIDATE_OUTPUT", StepKind::ValidateOutput),
        ("REDACT_OUTPUT", StepKind::RedactOutput),
        ("EXPORT_OUTPUT", StepKind::ExportOutput),
        ("AUDIT", StepKind::Audit),
        ("DONE", StepKind::Done),
    ] {
        m.add(name, kind.as_u8())?;
    }
    Ok(())
}
