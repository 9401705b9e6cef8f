//! The PostgreSQL audit sink for Node (issue 8): opening it, queueing
//! records, its counters, flushing, attaching it to a registry, closing it.
//! Opened sinks wait in a process-wide table, addressed by handles from
//! the same counter as stores.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, LazyLock, Mutex};

use napi::Env;
use napi::bindgen_prelude::PromiseRaw;
use napi_derive::napi;
use orpc_agent_core::ffi::{AuditRoute, open_postgres_audit};
use orpc_agent_core::pipeline::audit_postgres::PostgresAuditSink;
use orpc_agent_core::pipeline::driver::AuditSink;
use serde_json::{Value, json};

use super::{NEXT, options, to_napi};
use crate::errors::internal;
use crate::registry::registry_call;

static SINKS: LazyLock<Mutex<HashMap<u32, Arc<PostgresAuditSink>>>> = LazyLock::new(Mutex::default);

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
