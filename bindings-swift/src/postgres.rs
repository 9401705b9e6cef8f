//! The PostgreSQL approval store for Swift (issue 8).
//!
//! PostgreSQL calls really wait, so these are the binding's only `async`
//! exports: uniffi turns them into Swift `async` functions that Swift
//! concurrency awaits. The database work itself runs on ONE process-wide
//! multi-thread tokio runtime (two workers) created on first use — the
//! pool's connection tasks live there — and the exported futures only
//! await its `JoinHandle`s, so they need no runtime of their own. Memory
//! and SQLite registries never reach any of this: their store steps run
//! inside the synchronous calls.

use std::future::Future;
use std::sync::Arc;

use orpc_agent_core::CapabilityError;
use orpc_agent_core::approval::{ApprovalStore, Decision as ApprovalDecision};
use orpc_agent_core::ffi::{
    BindingRegistry, BuildError, list_filter_from_json, open_postgres, open_postgres_audit,
    postgres_options_from_json, postgres_runtime,
};
use orpc_agent_core::pipeline::{Answer, StepKind};

use crate::FfiError;
use crate::convert::parse_json;
use crate::invocation::FfiInvocation;
use crate::records::{FfiApprovalPage, FfiApprovalRequest};
use crate::registry::FfiApprovalView;
use crate::registry::FfiRegistry;

fn internal(message: impl Into<String>) -> CapabilityError {
    CapabilityError::new(orpc_agent_core::ErrorCode::Internal, message)
}

/// Runs `fut` on the runtime and awaits it from any executor.
async fn on_runtime<T: Send + 'static>(
    fut: impl Future<Output = Result<T, CapabilityError>> + Send + 'static,
) -> Result<T, CapabilityError> {
    postgres_runtime()?
        .spawn(fut)
        .await
        .map_err(|_| internal("a PostgreSQL task failed"))?
}

/// Connects to PostgreSQL (pool + migrations) and builds a registry on it.
/// `postgres_options_json` is `core::ffi::postgres_options_from_json`'s
/// input (`null` for the defaults).
#[uniffi::export]
pub async fn open_postgres_registry(
    declarations_json: String,
    options_json: String,
    url: String,
    postgres_options_json: String,
    audit: bool,
    audit_payloads: bool,
) -> Result<Arc<FfiRegistry>, FfiError> {
    let decls = parse_json(&declarations_json)?;
    let options = parse_json(&options_json)?;
    let (pg, _) = postgres_options_from_json(&parse_json(&postgres_options_json)?)?;
    let store = on_runtime(async move { open_postgres(&url, pg).await }).await?;
    let host =
        BindingRegistry::build(&decls, &options, store as Arc<dyn ApprovalStore>).map_err(|e| {
            match e {
                BuildError::Invalid(r) => FfiError::from(r),
                BuildError::Setup(c) => FfiError::from(c),
            }
        })?;
    Ok(FfiRegistry::from_host(host, audit, audit_payloads))
}

/// The PostgreSQL audit sink's counters.
#[derive(Debug, uniffi::Record)]
pub struct FfiAuditStats {
    /// Records written to the database.
    pub written: u64,
    /// Records dropped because the queue was full.
    pub dropped: u64,
    /// Records the database refused or could not take, after retries.
    pub failed: u64,
}

#[uniffi::export]
impl FfiRegistry {
    /// Connects a PostgreSQL audit sink (its own small pool, migrations
    /// applied) and sends every audit record of this registry's later
    /// invocations to it, from Rust, never waiting (a full queue drops and
    /// counts). Once per registry. `options_json` is
    /// `core::ffi::postgres_options_from_json`'s input (`null`: defaults).
    pub async fn attach_postgres_audit(
        &self,
        url: String,
        options_json: String,
    ) -> Result<(), FfiError> {
        let (pg, queue) = postgres_options_from_json(&parse_json(&options_json)?)?;
        let sink = on_runtime(async move { open_postgres_audit(&url, pg, queue).await }).await?;
        self.pg_audit
            .set(sink)
            .map_err(|_| FfiError::from(internal("this registry already has an audit sink")))
    }

    /// The audit sink's counters, or `None` without one.
    pub fn audit_stats(&self) -> Option<FfiAuditStats> {
        self.pg_audit.get().map(|s| FfiAuditStats {
            written: s.written(),
            dropped: s.dropped(),
            failed: s.failed(),
        })
    }

    /// Waits until every record queued so far is written (or counted as
    /// failed); returns at once without a sink. Call before exit: queued
    /// records are lost when the process ends.
    pub async fn audit_flush(&self) {
        if let Some(sink) = self.pg_audit.get().cloned() {
            let _ = on_runtime(async move {
                sink.flush().await;
                Ok(())
            })
            .await;
        }
    }
}

#[uniffi::export]
impl FfiInvocation {
    /// Performs the store step this invocation waits on (`persistApproval`
    /// or `consumeApproval`, handed back only by a store that waits) and
    /// returns the next step kind.
    pub async fn store_step(&self, now_ms: u64) -> u8 {
        let Some((op, kind)) = self.store_op(now_ms) else {
            return self.step_kind();
        };
        let started = std::time::Instant::now();
        let answer = match on_runtime(async move { Ok(op.run().await) }).await {
            Ok(a) => a,
            Err(e) if kind == StepKind::PersistApproval => Answer::StoreFailed(e),
            Err(e) => Answer::Consumed(Err(e)),
        };
        // The answer's time is Swift's reading plus the round trip: a
        // consume that outlasted the deadline never hands out the handler
        // step (the core's `at`), as Node and Python read the clock after it.
        let took = u64::try_from(started.elapsed().as_micros().div_ceil(1000)).unwrap_or(u64::MAX);
        self.apply(answer, now_ms.saturating_add(took))
    }
}

fn store(reg: &FfiRegistry) -> Arc<dyn ApprovalStore> {
    Arc::clone(reg.host().store())
}

#[uniffi::export]
impl FfiRegistry {
    /// One request, or `None` (any store; never blocks a thread).
    pub async fn approval_async(
        &self,
        id: String,
        now_ms: u64,
    ) -> Result<Option<FfiApprovalRequest>, FfiError> {
        let store = store(self);
        let found = on_runtime(async move { Ok(store.get(&id).await?) }).await?;
        Ok(found.map(|r| FfiApprovalRequest::at(&r, now_ms)))
    }

    /// One page (`next_cursor` `None` on the last);
    /// filter `{capabilityId?, actorId?, status?, limit?, cursor?}`.
    pub async fn approvals_page_async(
        &self,
        filter_json: String,
        now_ms: u64,
    ) -> Result<FfiApprovalPage, FfiError> {
        let filter = list_filter_from_json(&parse_json(&filter_json)?, now_ms)?;
        let store = store(self);
        let f = filter.clone();
        let page = on_runtime(async move { Ok(store.list(&f).await?) }).await?;
        Ok(FfiApprovalPage::of(&page, &filter))
    }

    /// What an approval UI may show of a request's input (any store; never
    /// blocks a thread): APPROVAL_NOT_FOUND for a request the store does
    /// not hold.
    pub async fn approval_input_view(&self, id: String) -> Result<FfiApprovalView, FfiError> {
        // Only a store that waits needs the runtime (a memory or SQLite
        // registry never starts it: see the module's doc).
        let request = if self.host().store().waits() {
            on_runtime(self.host().existing_approval_owned(id)).await?
        } else {
            self.host().existing_approval(&id)?
        };
        Ok(FfiApprovalView::of(
            &request,
            self.host().approval_view(&request)?,
        ))
    }

    /// Approve or reject with the registry's `approverMustDiffer` rule;
    /// the decided request.
    pub async fn decide_async(
        &self,
        id: String,
        approve: bool,
        approver: Option<String>,
        reason: Option<String>,
        now_ms: u64,
    ) -> Result<FfiApprovalRequest, FfiError> {
        let decision = ApprovalDecision::approving(approve);
        let decide = self
            .host()
            .decide_owned(id, decision, approver, reason, now_ms);
        let decided = on_runtime(decide).await?;
        Ok(FfiApprovalRequest::at(&decided, now_ms))
    }
}
