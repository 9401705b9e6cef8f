//! The in-process agent-tool adapters' rules (`orpc_agent_core::agent_tools`)
//! for the AI SDK and OpenAI Agents adapters (src/adapters/ai-sdk*.ts,
//! openai-agents*.ts, approval-ids.ts): the key a request id is kept
//! under, and the texts the model reads. Conversion only.

use napi_derive::napi;
use orpc_agent_core::agent_tools;

/// The key for a request id between the approval turn and the approved
/// re-run (the caller, the call id, the tool and its arguments), or null
/// when the frame names no caller or the arguments are no JSON.
#[napi(catch_unwind)]
pub fn agent_tool_approval_key(
    actor_id: Option<String>,
    session_id: Option<String>,
    tool_call_id: String,
    tool: String,
    arguments_json: String,
) -> Option<String> {
    agent_tools::approval_key(
        actor_id.as_deref(),
        session_id.as_deref(),
        &tool_call_id,
        &tool,
        &arguments_json,
    )
}

/// What the model reads of a call that needs approval and had no approval turn.
#[napi(catch_unwind)]
pub fn agent_tool_approval_required_text(request_id: String, reason: Option<String>) -> String {
    agent_tools::approval_required_text(&request_id, reason.as_deref())
}

/// Whether `ai` 7's `toolApproval` shows a call that ended in `code` as denied.
#[napi(catch_unwind)]
pub fn agent_tool_gate_denies(code: String) -> bool {
    agent_tools::gate_denies(&code)
}

/// Who is recorded as the approver of a framework's approval turn.
#[napi(catch_unwind)]
pub fn agent_tool_recorded_approver(
    configured: Option<String>,
    actor_id: Option<String>,
) -> Option<String> {
    agent_tools::recorded_approver(configured.as_deref(), actor_id.as_deref()).map(str::to_owned)
}

/// The AI SDK's preliminary tool result for accepted progress
/// (`agent_tools::preliminary_result`), as JSON. Progress the core accepted
/// is whole and non-negative; anything else reads as 0 / no total.
#[napi(catch_unwind)]
pub fn agent_tool_preliminary_result(done: f64, total: Option<f64>) -> String {
    let whole = |v: f64| {
        (v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_991.0)
            .then_some(v as u64)
    };
    agent_tools::preliminary_result(whole(done).unwrap_or(0), total.and_then(whole)).to_string()
}

/// `{unknownApproval, unknownInterruption, outputNotJson, failed}`: the
/// adapters' fixed texts.
#[napi(catch_unwind)]
pub fn agent_tool_messages() -> String {
    agent_tools::messages().to_string()
}

/// Whether a resumed request may still run after its resume ended in
/// `code` (`null`: ok) (`agent_tools::resume_may_run_again`).
#[napi(catch_unwind)]
pub fn agent_tool_resume_may_run_again(code: Option<String>) -> bool {
    agent_tools::resume_may_run_again(code.as_deref())
}

/// What the gate does with the request kept for a tool call, by its status
/// (`null`: none in the store): `holds`, `decided` or `afresh`
/// (`agent_tools::kept_request`).
#[napi(catch_unwind)]
pub fn agent_tool_kept_request(
    kept: bool,
    status: Option<String>,
    same_capability: bool,
) -> &'static str {
    agent_tools::kept_request(kept, status.as_deref(), same_capability).as_str()
}
