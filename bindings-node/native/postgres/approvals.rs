//! The approvals API (`get`, `list` by page, `approve`/`reject`) for
//! registries on a store that waits, such as PostgreSQL (issue 8): each
//! returns a Promise whose store work runs on the tokio runtime of
//! `postgres`. Beside them, `approval_page` is the synchronous stores'
//! page call, which returns the page itself.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;
use orpc_agent_core::CapabilityError;
use orpc_agent_core::approval::{ApprovalStore, Decision as ApprovalDecision};
use orpc_agent_core::ffi::{list_filter_from_json, page_json};

use super::to_napi;
use crate::errors::parse_json;
use crate::invoke::ms;
use crate::js_json::js_text;
use crate::registry::registry_call;

/// The store of registry `reg`, to run an approval operation off the JS
/// thread.
fn store_of(reg: u32) -> napi::Result<Arc<dyn ApprovalStore>> {
    registry_call(reg, |r| Ok(Arc::clone(r.host.store())))
}

/// `approvals.get` for a store that waits: the request as JSON, or null.
#[napi(catch_unwind)]
pub fn approval_get_async<'env>(
    env: &'env Env,
    reg: u32,
    id: String,
    now: f64,
) -> napi::Result<PromiseRaw<'env, Option<String>>> {
    let store = store_of(reg)?;
    env.spawn_future(async move {
        let found = store
            .get(&id)
            .await
            .map_err(|e| to_napi(CapabilityError::from(e)))?;
        Ok(found.map(|r| js_text(&r.to_json_at(ms(now)))))
    })
}

/// One page of requests with the cursor of the next (synchronous stores):
/// `{requests, nextCursor}`; `nextCursor` is null on the last page.
#[napi(catch_unwind)]
pub fn approval_page(reg: u32, filter: String, now: f64) -> napi::Result<String> {
    registry_call(reg, |r| {
        let filter = list_filter_from_json(&parse_json(&filter, "the filter")?, ms(now))?;
        Ok(js_text(&page_json(&r.host.approvals(&filter)?, &filter)))
    })
}

/// [`approval_page`] for a store that waits.
#[napi(catch_unwind)]
pub fn approval_page_async<'env>(
    env: &'env Env,
    reg: u32,
    filter: String,
    now: f64,
) -> napi::Result<PromiseRaw<'env, String>> {
    let filter = list_filter_from_json(
        &parse_json(&filter, "the filter").map_err(to_napi)?,
        ms(now),
    )
    .map_err(to_napi)?;
    let store = store_of(reg)?;
    env.spawn_future(async move {
        let page = store
            .list(&filter)
            .await
            .map_err(|e| to_napi(CapabilityError::from(e)))?;
        Ok(js_text(&page_json(&page, &filter)))
    })
}

/// `approvals.approve`/`reject` for a store that waits, with the
/// registry's `approverMustDiffer` rule; resolves to the decided request.
#[napi(catch_unwind)]
pub fn approval_decide_async<'env>(
    env: &'env Env,
    reg: u32,
    id: String,
    approve: bool,
    approver: Option<String>,
    reason: Option<String>,
    now: f64,
) -> napi::Result<PromiseRaw<'env, String>> {
    let decision = ApprovalDecision::approving(approve);
    let decide = registry_call(reg, |r| {
        Ok(r.host.decide_owned(id, decision, approver, reason, ms(now)))
    })?;
    env.spawn_future(async move {
        let decided = decide.await.map_err(to_napi)?;
        Ok(js_text(&decided.to_json_at(ms(now))))
    })
}
