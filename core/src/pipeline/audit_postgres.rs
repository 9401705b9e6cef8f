//! An optional PostgreSQL audit sink (feature `postgres`, issue 8): one row
//! of `orpc_audit` per [`AuditRecord`], so an operator can ask "who approved
//! what, for which input hash" by joining with `orpc_approvals` (see
//! `core/migrations/postgres/0002_audit.sql`).
//!
//! The driver's [`AuditSink::record`] is synchronous and runs on the
//! invocation's path, so this sink never waits for the database: a record
//! goes into a bounded channel and a background task writes batches of
//! them (one `INSERT … SELECT … FROM jsonb_array_elements($1)` per batch).
//! **When the channel is full — the database is slow or down — the record
//! is dropped and counted ([`PostgresAuditSink::dropped`]); an invocation
//! is never blocked or failed by its audit.** A batch the database refuses
//! after retries is counted in [`PostgresAuditSink::failed`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use deadpool_postgres::Pool;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::types::Json;

use super::audit::AuditRecord;
use super::driver::AuditSink;
use crate::approval::StoreError;
use crate::approval::postgres::{Failure, PostgresOptions, connect_pool, retrying};

/// Records waiting to be written, by default; past it they are dropped.
pub const DEFAULT_AUDIT_QUEUE: usize = 10_000;

/// Most records written by one statement.
const MAX_BATCH: usize = 500;

enum Msg {
    Record(Value),
    /// Answered once every record queued before it has been handled.
    Flush(oneshot::Sender<()>),
}

#[derive(Debug, Default)]
struct Counters {
    written: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
}

/// Writes audit records to PostgreSQL in the background. Dropping the sink
/// (every clone of the `Arc` the driver holds) lets the writer finish the
/// queue and stop.
#[derive(Debug)]
pub struct PostgresAuditSink {
    tx: mpsc::Sender<Msg>,
    counters: Arc<Counters>,
    /// [`PostgresAuditSink::close`] was called: records are refused, even
    /// from a registry that still holds the sink.
    closed: AtomicBool,
}

impl PostgresAuditSink {
    /// Connects its own small pool to `url` (applying migrations) and
    /// starts the writer on the current tokio runtime.
    pub async fn connect(
        url: &str,
        options: PostgresOptions,
        queue: usize,
    ) -> Result<PostgresAuditSink, StoreError> {
        let pool = connect_pool(url, &options).await?;
        Ok(PostgresAuditSink::with_pool(pool, queue))
    }

    /// Writes through an existing pool, e.g. the approval store's
    /// ([`PostgresApprovalStore::pool`](crate::approval::PostgresApprovalStore::pool),
    /// whose migrations already created the table). Must be called within
    /// a tokio runtime: it spawns the writer task.
    pub fn with_pool(pool: Pool, queue: usize) -> PostgresAuditSink {
        let (tx, rx) = mpsc::channel(queue.max(1));
        let counters = Arc::new(Counters::default());
        tokio::spawn(writer(pool, rx, counters.clone()));
        PostgresAuditSink {
            tx,
            counters,
            closed: AtomicBool::new(false),
        }
    }

    /// Records written to the database so far.
    pub fn written(&self) -> u64 {
        self.counters.written.load(Ordering::Relaxed)
    }

    /// Records dropped because the queue was full (or the writer stopped).
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::Relaxed)
    }

    /// Records the database refused or could not take, after retries.
    pub fn failed(&self) -> u64 {
        self.counters.failed.load(Ordering::Relaxed)
    }

    /// Waits until every record handed to [`AuditSink::record`] before this
    /// call has been written (or counted as failed). For shutdown and tests.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

impl PostgresAuditSink {
    /// Stops accepting records (each one after this is counted as
    /// dropped); the writer still writes what was queued before.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
    }

    fn queue(&self, record: Value) {
        if self.closed.load(Ordering::Relaxed) || self.tx.try_send(Msg::Record(record)).is_err() {
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Queues a record already in its JSON form ([`AuditRecord::to_json`]),
    /// for bindings whose audit records arrive as JSON from the host side.
    /// Same rules as [`AuditSink::record`]: never waits; counted as dropped
    /// when the queue is full.
    pub fn record_json(&self, record: Value) {
        self.queue(record);
    }
}

impl AuditSink for PostgresAuditSink {
    fn record(&self, record: &AuditRecord) {
        self.queue(record.to_json());
    }
}

async fn writer(pool: Pool, mut rx: mpsc::Receiver<Msg>, counters: Arc<Counters>) {
    let mut msgs = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut msgs, MAX_BATCH).await > 0 {
        let mut batch = Vec::with_capacity(msgs.len());
        let mut flushes = Vec::new();
        for m in msgs.drain(..) {
            match m {
                Msg::Record(v) => batch.push(v),
                Msg::Flush(done) => flushes.push(done),
            }
        }
        if !batch.is_empty() {
            let n = u64::try_from(batch.len()).unwrap_or(u64::MAX);
            let batch = Value::Array(batch);
            match retrying(|| write_batch(&pool, &batch)).await {
                Ok(()) => counters.written.fetch_add(n, Ordering::Relaxed),
                Err(_) => counters.failed.fetch_add(n, Ordering::Relaxed),
            };
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

/// One statement for the whole batch: the records travel as one JSON array
/// and PostgreSQL extracts the queried columns from each.
async fn write_batch(pool: &Pool, batch: &Value) -> Result<(), Failure> {
    let client = pool.get().await.map_err(|e| {
        Failure::Transient(StoreError::Backend {
            kind: crate::approval::BackendErrorKind::CannotOpen,
            message: e.to_string(),
        })
    })?;
    let st = client
        .prepare_cached(
            "INSERT INTO orpc_audit (event, capability_id, requested, surface, actor_id, \
             resumed, approval_id, input_hash, outcome, stage, attempts, started_at, \
             duration_ms, traceparent, request_id, agent_id, session_id, record) \
             SELECT r->>'event', r->>'capabilityId', r->>'requested', r->>'surface', \
                    r->>'actorId', (r->>'resumed')::boolean, r->>'approvalId', \
                    r->>'inputHash', r->>'outcome', (r->>'stage')::integer, \
                    (r->>'attempts')::integer, \
                    'epoch'::timestamptz + (r->>'startedAt')::int8 * interval '1 millisecond', \
                    (r->>'durationMs')::int8, r->>'traceparent', r->>'requestId', \
                    r->>'agentId', r->>'sessionId', r \
             FROM jsonb_array_elements($1::jsonb) r",
        )
        .await
        .map_err(Failure::db)?;
    client
        .execute(&st, &[&Json(batch)])
        .await
        .map_err(Failure::db)?;
    Ok(())
}
