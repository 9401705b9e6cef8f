//! The PostgreSQL approval store for Node (issue 8): opening it, building
//! registries on it, and running their store steps.
//!
//! PostgreSQL calls really wait, so they cannot run inside the synchronous
//! crossings of the hot path. Every call that reaches the database returns
//! a Promise: the work runs on napi-rs's process-wide multi-thread tokio
//! runtime (feature `tokio_rt`), which also owns the pool's connection
//! tasks — one long-lived runtime, never one per call. The promise settles
//! on the JS thread (`spawn_future_with_callback`), where the invocation
//! and registry slabs live.
//!
//! Only registries built on a store that waits ever reach these calls: the
//! driver loop sees `PersistApproval`/`ConsumeApproval` only when
//! `BindingRegistry::advance` could not perform the step synchronously, so the
//! memory and SQLite fast path is unchanged.
//!
//! Opened stores wait in a process-wide table (they are `Send` and outlive
//! any one Node thread), addressed by integer handles from one counter
//! that the audit sinks share.
//!
//! Submodules: the approvals API for a store that waits (`approvals`) and
//! the PostgreSQL audit sink (`audit`). This module holds what they share:
//! the handle counter, the error mapping and the options parser.

mod approvals;
mod audit;

pub use approvals::*;
pub use audit::*;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;
use orpc_agent_core::CapabilityError;
use orpc_agent_core::approval::{ApprovalStore, PostgresApprovalStore};
use orpc_agent_core::ffi::{
    BindingRegistry, BuildError, open_postgres, postgres_options_from_json, registry_error_json,
};

use crate::errors::{internal, parse_json, throw, throw_json};
use crate::invoke::answer_in;
use crate::invoke::ms;
use crate::registry::{Registry, insert_registry, with_registry};

static NEXT: AtomicU32 = AtomicU32::new(1);
static STORES: LazyLock<Mutex<HashMap<u32, Arc<PostgresApprovalStore>>>> =
    LazyLock::new(Mutex::default);

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
