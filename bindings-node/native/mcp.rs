//! What an MCP client is told of a call that returned no output: the
//! core's `CallToolResult` JSON (`orpc_agent_core::mcp`), for the adapter
//! in src/adapters/mcp.ts to hand to the SDK. Conversion only.

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
    let details = match details {
        Some(text) => Some(parse_json(&text, "the error details").map_err(|e| throw(&e))?),
        None => None,
    };
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
