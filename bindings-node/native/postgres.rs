//! The PostgreSQL approval store and audit sink for Node (issue 8).
//!
//! PostgreSQL calls really wait, so they cannot run inside the synchronous
//! crossings of the hot path. Everything here returns a Promise: the
//! database work runs on napi-rs's process-wide multi-thread tokio runtime
//! (feature `tokio_rt`), which also owns the pool's connection tasks — one
//! long-lived runtime, never one per call. The promise settles on the JS
//! thread (`spawn_future_with_callback`), where the invocation and registry
//! slabs live.
//!
//! Only registries built on a store that waits ever reach these calls: the
//! driver loop sees `PersistApproval`/`ConsumeApproval` only when
//! `BindingRegistry::advance` could not perform the step synchronously, so the
//! memory and SQLite fast path is unchanged.
//!
//! Opened stores and sinks wait in process-wide tables (they are `Send`
//! and outlive any one Node thread), addressed by integer handles.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;
use orpc_agent_core::CapabilityError;
use orpc_agent_core::approval::{
    ApprovalStore, Decision as ApprovalDecision, PostgresApprovalStore,
};
use orpc_agent_core::ffi::{
    AuditRoute, BindingRegistry, BuildError, list_filter_from_json, open_postgres,
    open_postgres_audit, page_json, postgres_options_from_json, registry_error_json,
};
use orpc_agent_core::pipeline::audit_postgres::PostgresAuditSink;
use orpc_agent_core::pipeline::driver::AuditSink;
use serde_json::{Value, json};

use crate::errors::{internal, parse_json, throw, throw_json};
use crate::invoke::answer_in;
use crate::invoke::ms;
use crate::js_json::js_text;
use crate::registry::{Registry, insert_registry, registry_call, with_registry};

static NEXT: AtomicU32 = AtomicU32::new(1);
static STORES: LazyLock<Mutex<HashMap<u32, Arc<PostgresApprovalStore>>>> =
    LazyLock::new(Mutex::default);
static SINKS: LazyLock<Mutex<HashMap<u32, Arc<PostgresAuditSink>>>> = LazyLock::new(Mutex::default);

fn to_napi(e: CapabilityError) -> napi::Error {
    throw(&e)
}

fn options(text: &str) -> Result<(orpc_agent_core::approval::PostgresOptions, usize), napi::Error> {
    postgres_options_from_json(&parse_json(text, "the PostgreSQL options").map_err(to_napi)?)
        .map_err(to_napi)
}

/// Connects to PostgreSQL at `url` (pool + migrations) and resolves to a
/// store handle for [`registry_build_postgres`]. `options` is the JSON of
/// `core::ffi::postgres_options_from_json`. Rejects with a
/// `CapabilityError` (INTERNAL, `details.store` = the backend kind).
#[napi(catch_unwind)]
pub fn postgres_open<'env>(
    env: &'env Env,
    url: String,
    options_json: String,
) -> napi::Result<PromiseRaw<'env, u32>> {
    let (opts, _) = options(&options_json)?;
    env.spawn_future(async move {
        let store = open_postgres(&url, opts).await.map_err(to_napi)?;
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        STORES
            .lock()
            .map_err(|_| to_napi(internal("store table poisoned")))?
            .insert(id, store);
        Ok(id)
    })
}

/// Builds a registry (as `registryBuild`) on an opened PostgreSQL store;
/// the store handle is used up (one registry per open).
#[napi(catch_unwind)]
pub fn registry_build_postgres(
    declarations: String,
    options: String,
    store: u32,
    audit: bool,
    audit_payloads: bool,
) -> napi::Result<u32> {
    let decls = parse_json(&declarations, "declarations").map_err(to_napi)?;
    let options = parse_json(&options, "options").map_err(to_napi)?;
    let opened = STORES
        .lock()
        .map_err(|_| to_napi(internal("store table poisoned")))?
        .remove(&store)
        .ok_or_else(|| to_napi(internal("no such PostgreSQL store handle")))?;
    let host = match BindingRegistry::build(&decls, &options, opened as Arc<dyn ApprovalStore>) {
        Ok(h) => h,
        Err(BuildError::Invalid(e)) => return Err(throw_json(&registry_error_json(&e))),
        Err(BuildError::Setup(e)) => return Err(to_napi(e)),
    };
    Ok(insert_registry(Registry::new(host, audit, audit_payloads)))
}

/// Performs the store step invocation `h` waits on (`PersistApproval` or
/// `ConsumeApproval`) on the runtime, answers it on the JS thread, and
/// resolves to the next step, packed as every answer call packs it. Both
/// times are JavaScript's clock (one clock for the whole call, as on every
/// other crossing): `now` when the step starts, and `Date.now()` read on
/// the JS thread when the answer is applied.
#[napi(catch_unwind)]
pub fn store_step<'env>(
    env: &'env Env,
    reg: u32,
    h: u32,
    now: f64,
) -> napi::Result<PromiseRaw<'env, f64>> {
    let op = with_registry(reg, |r| {
        let inv = r
            .invocations
            .get(h)
            .ok_or_else(|| internal("no such invocation"))?;
        r.host
            .store_op(inv, ms(now))
            .ok_or_else(|| internal("the invocation is not at a store step"))
    })
    .map_err(to_napi)?;
    env.spawn_future_with_callback(async move { Ok(op.run().await) }, move |env, answer| {
        answer_in(reg, h, js_now(env).unwrap_or(now), answer).map_err(to_napi)
    })
}

/// `Date.now()` of the JS thread (a mocked `Date` drives it, as it drives
/// every other time the façade passes).
fn js_now(env: &Env) -> napi::Result<f64> {
    use napi::bindgen_prelude::JsObjectValue;
    let date: napi::bindgen_prelude::Object = env.get_global()?.get_named_property("Date")?;
    let now: napi::bindgen_prelude::Function<(), f64> = date.get_named_property("now")?;
    now.apply(date, ())
}

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

// ----- audit sink ------------------------------------------------------------

/// Connects a PostgreSQL audit sink (its own small pool, migrations
/// applied) and resolves to its handle.
#[napi(catch_unwind)]
pub fn postgres_audit_open<'env>(
    env: &'env Env,
    url: String,
    options_json: String,
) -> napi::Result<PromiseRaw<'env, u32>> {
    let (opts, queue) = options(&options_json)?;
    env.spawn_future(async move {
        let sink = open_postgres_audit(&url, opts, queue)
            .await
            .map_err(to_napi)?;
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        SINKS
            .lock()
            .map_err(|_| to_napi(internal("sink table poisoned")))?
            .insert(id, sink);
        Ok(id)
    })
}

fn sink(id: u32) -> Option<Arc<PostgresAuditSink>> {
    SINKS.lock().ok()?.get(&id).cloned()
}

/// Queues one audit record (JSON text). Never waits; a full queue or a
/// closed sink counts the record as dropped.
#[napi(catch_unwind)]
pub fn postgres_audit_record(id: u32, record: String) {
    if let (Some(s), Ok(v)) = (sink(id), serde_json::from_str::<Value>(&record)) {
        s.record_json(v);
    }
}

/// `{written, dropped, failed}` of a sink.
#[napi(catch_unwind)]
pub fn postgres_audit_stats(id: u32) -> napi::Result<String> {
    let s = sink(id).ok_or_else(|| to_napi(internal("this audit sink was closed")))?;
    Ok(json!({"written": s.written(), "dropped": s.dropped(), "failed": s.failed()}).to_string())
}

/// Resolves once every record queued before the call is written (or
/// counted as failed).
#[napi(catch_unwind)]
pub fn postgres_audit_flush<'env>(env: &'env Env, id: u32) -> napi::Result<PromiseRaw<'env, ()>> {
    let s = sink(id);
    env.spawn_future(async move {
        if let Some(s) = s {
            s.flush().await;
        }
        Ok(())
    })
}

/// Sends registry `reg`'s audit records to sink `id` from Rust (each
/// record is queued as the core holds it, never through JavaScript);
/// `to_host`: the façade still sees them (a subscriber or telemetry).
#[napi(catch_unwind)]
pub fn registry_attach_audit_sink(reg: u32, id: u32, to_host: bool) -> napi::Result<()> {
    let s = sink(id).ok_or_else(|| to_napi(internal("this audit sink was closed")))?;
    registry_call(reg, |r| {
        r.route = AuditRoute {
            sink: Some(s as Arc<dyn AuditSink>),
            to_host,
        };
        Ok(())
    })
}

/// Forgets a sink: its writer finishes the queue and stops.
#[napi(catch_unwind)]
pub fn postgres_audit_close(id: u32) {
    // Closed, not only forgotten: a registry that sends it records from
    // Rust (`registryAttachAuditSink`) holds the sink too.
    if let Some(sink) = SINKS.lock().ok().and_then(|mut t| t.remove(&id)) {
        sink.close();
    }
}
