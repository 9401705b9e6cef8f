//! Approval operations for approval UIs: get, list, decide, and what a UI
//! may show of a request's input.

use napi_derive::napi;
use orpc_agent_core::approval::{
    ApprovalRequest, Decision as ApprovalDecision, ListFilter, Requester,
};
use orpc_agent_core::ffi::list_filter_from_json;
use orpc_agent_core::meta::Surface;
use serde_json::json;

use crate::errors::{invalid, parse_json};
use crate::invoke::ms;
use crate::js_json::js_text;
use crate::registry::registry_call;

/// One request as JSON as of `now` (`status` the effective one), or
/// `None` when the store has no such id.
#[napi(catch_unwind)]
pub fn approval_get(reg: u32, id: String, now: f64) -> napi::Result<Option<String>> {
    registry_call(reg, |r| {
        Ok(r.host
            .approval(&id)?
            .map(|req| js_text(&req.to_json_at(ms(now)))))
    })
}

/// A page of requests as a JSON array as of `now`; `filter` is
/// `{capabilityId?, actorId?, status?, limit?, cursor?}` (`status` the
/// effective one, `expired` included).
#[napi(catch_unwind)]
pub fn approval_list(reg: u32, filter: String, now: f64) -> napi::Result<String> {
    registry_call(reg, |r| {
        let filter = list_filter_from_json(&parse_json(&filter, "the filter")?, ms(now))?;
        Ok(js_text(&ApprovalRequest::views_json(
            &r.host.approvals(&filter)?,
            ms(now),
        )))
    })
}

/// Approves (`approve: true`) or rejects a pending request; returns the
/// decided request as JSON.
#[napi(catch_unwind)]
pub fn approval_decide(
    reg: u32,
    id: String,
    approve: bool,
    approver: Option<String>,
    reason: Option<String>,
    now: f64,
) -> napi::Result<String> {
    registry_call(reg, |r| {
        let decision = ApprovalDecision::approving(approve);
        let now_ms = ms(now);
        let req = r.host.decide(
            &id,
            decision,
            approver.as_deref(),
            reason.as_deref(),
            now_ms,
        )?;
        Ok(js_text(&req.to_json_at(now_ms)))
    })
}

/// How an approval UI may show `request`'s input (the request as JSON, as
/// returned by the other calls): `{view, capabilityIndex, info, input}`,
/// `view` one of the core's `ffi::approval_view_code` (`ApprovalView` in
/// the generated protocol file): show `input` as stored, or call the
/// capability's `redact.approvalInput` with `info` (the *recorded* surface
/// and actor), for at most `timeoutMs`. A request whose capability is gone
/// throws NOT_FOUND.
#[napi(catch_unwind)]
pub fn approval_input_view(reg: u32, request: String) -> napi::Result<String> {
    registry_call(reg, |r| {
        let req = ApprovalRequest::from_view_json(parse_json(&request, "the request")?)
            .map_err(|e| invalid(format!("not an approval request: {e}")))?;
        let view = r.host.approval_view(&req)?;
        Ok(js_text(&json!({
            "view": view.code,
            "capabilityIndex": view.capability_index,
            "info": view.info,
            "input": req.input,
            "timeoutMs": view.timeout_ms,
        })))
    })
}

/// Whether a request made on `request_surface` by `request_actor_id` is the
/// caller's own (`Requester::made_on`: same surface, same actor id). What a
/// gateway caller may read without the app's `canDecide`.
#[napi(catch_unwind)]
pub fn approval_made_by(
    surface: String,
    actor_id: Option<String>,
    request_surface: String,
    request_actor_id: Option<String>,
) -> bool {
    let (Some(surface), Some(request_surface)) =
        (Surface::parse(&surface), Surface::parse(&request_surface))
    else {
        return false;
    };
    Requester::of(surface, actor_id.as_deref())
        .is_some_and(|me| me.made_on(request_surface, request_actor_id.as_deref()))
}

/// The page size a list filter's `limit` gives (`ListFilter::effective_limit`:
/// 0 the default, beyond the maximum the maximum): what a caller that pages
/// through the store for its own page (the gateway's list) counts as full.
/// `limit` is a JS number: not a positive finite one is 0.
#[napi(catch_unwind)]
pub fn approval_page_size(limit: f64) -> u32 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let limit = if limit.is_finite() && limit >= 1.0 {
        limit.min(f64::from(u32::MAX)) as u32
    } else {
        0
    };
    ListFilter {
        limit,
        ..ListFilter::default()
    }
    .effective_limit()
}
