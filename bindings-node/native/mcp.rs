//! What an MCP client is told of a call that returned no output: the
//! core's `CallToolResult` JSON (`orpc_agent_core::mcp`), for the MCP
//! adapter (src/adapters/mcp-call.ts, mcp-tasks.ts, and mcp-answer.ts) to
//! hand to the SDK. Conversion only.

use napi_derive::napi;
use orpc_agent_core::approval::ApprovalRequest;
use orpc_agent_core::mcp;

use crate::errors::{invalid, parse_json, throw};

/// The result of a failed call; `details` is the error's details as JSON.
#[napi(catch_unwind)]
pub fn mcp_error_result(
    code: String,
    message: String,
    retryable: bool,
    details: Option<String>,
) -> napi::Result<String> {
    // Details with no JSON form the core reads (deeper than its parser
    // goes, over the size bound) are left out, as Python leaves them out:
    // the error's code and message still reach the model.
    let details = details.and_then(|text| orpc_agent_core::limits::error_details_text(&text));
    Ok(mcp::error_result_from(&code, &message, retryable, details).to_string())
}

/// The result of a call that needs approval; `request` as get, list and
/// invoke show it.
#[napi(catch_unwind)]
pub fn mcp_approval_result(request: String) -> napi::Result<String> {
    let request = ApprovalRequest::from_view_json(
        parse_json(&request, "the request").map_err(|e| throw(&e))?,
    )
    .map_err(|e| throw(&invalid(format!("not an approval request: {e}"))))?;
    Ok(mcp::approval_result(&request).to_string())
}

/// `{approvalId, approval, error}`: the `_meta` keys.
#[napi(catch_unwind)]
pub fn mcp_meta_keys() -> String {
    mcp::meta_keys().to_string()
}

/// `mcp::ok_parts` as bits: 1 the text is the string output as it is, 2
/// the output is also the `structuredContent`. Primitives only: the output's
/// JSON stays in JavaScript (this is every MCP call's path).
#[napi(catch_unwind)]
pub fn mcp_ok_parts(is_string: bool, is_object: bool, publishes_output_schema: bool) -> u32 {
    let parts = mcp::ok_parts(is_string, is_object, publishes_output_schema);
    u32::from(parts.text_as_is) | (u32::from(parts.structured) << 1)
}

/// In-band confirmation: whether a request of `approval_type` is put to
/// the person at the client (`mcp::elicits`).
#[napi(catch_unwind)]
pub fn mcp_elicits(
    approval_type: Option<String>,
    elicit_types: Vec<String>,
    client_elicits: bool,
) -> bool {
    mcp::elicits(approval_type.as_deref(), &elicit_types, client_elicits)
}

/// The `elicitation/create` parameters (JSON text) of a confirmation;
/// `view` is the approval-input view as JSON text.
#[napi(catch_unwind)]
pub fn mcp_elicitation_params(
    tool_name: String,
    request_id: String,
    reason: Option<String>,
    view: String,
) -> napi::Result<String> {
    let view = parse_json(&view, "the approval view").map_err(|e| throw(&e))?;
    Ok(mcp::elicitation_params(&tool_name, &request_id, reason.as_deref(), &view).to_string())
}

/// Whether a confirmation's answer approves (`mcp::elicitation_approves`).
#[napi(catch_unwind)]
pub fn mcp_elicitation_approves(action: String) -> bool {
    mcp::elicitation_approves(&action)
}

/// Whether a confirmation whose decision the core refused with `code`
/// (`approves`: the person accepted) answers with the resume through the
/// tool (`mcp::refused_decision_resumes`).
#[napi(catch_unwind)]
pub fn mcp_refused_decision_resumes(code: String, approves: bool) -> bool {
    mcp::refused_decision_resumes(&code, approves)
}

/// The rejection reason recorded when the person at the client declines.
#[napi(catch_unwind)]
pub fn mcp_elicitation_declined() -> String {
    mcp::ELICITATION_DECLINED.to_owned()
}

/// MCP tasks: the status a finished call's result (JSON text) ends its
/// task in (`mcp::task_status`).
#[napi(catch_unwind)]
pub fn mcp_task_status(result: String) -> napi::Result<String> {
    let result = parse_json(&result, "the tool result").map_err(|e| throw(&e))?;
    Ok(mcp::task_status(&result).to_owned())
}

/// MCP tasks: the `statusMessage` of a task waiting for approval
/// (`mcp::task_waiting_message`); `request` is the request's JSON text.
#[napi(catch_unwind)]
pub fn mcp_task_waiting_message(request: String) -> napi::Result<String> {
    let request = ApprovalRequest::from_view_json(
        parse_json(&request, "the request").map_err(|e| throw(&e))?,
    )
    .map_err(|e| throw(&invalid(format!("not an approval request: {e}"))))?;
    Ok(mcp::task_waiting_message(&request))
}
