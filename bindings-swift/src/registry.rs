//! The registry object Swift holds: a core `BindingRegistry` (registry +
//! approval store) plus the audit switches of its invocations.
//!
//! This module holds what uniffi exports (the records, the object and its
//! methods), because uniffi writes an export's module path into its
//! metadata: the generated Swift bindings' checksums and order depend on
//! it. What the methods work out beyond one core call lives in the
//! submodules: `setup` (how a registry is put together and what each of
//! its invocations starts with) and `approvals` (the resume a limit selects,
//! the view of a request's input).

mod approvals;
mod setup;

use std::sync::Arc;

use orpc_agent_core::approval::Decision as ApprovalDecision;
use orpc_agent_core::ffi::{BindingRegistry, BuildError, StoreConfig, list_filter_from_json};
use orpc_agent_core::pipeline::audit_postgres::PostgresAuditSink;
use orpc_agent_core::{Invocation, Surface};

use crate::convert::{FfiHostInput, frame, parse_json, start_verdict};
use crate::invocation::FfiInvocation;
use crate::records::{FfiApprovalRequest, FfiFrameDetails};
use crate::{FfiError, invalid_input};
pub use approvals::FfiApprovalView;

/// Who may resume a request (`FfiRegistry::resume`); the core decides.
#[derive(Debug, uniffi::Enum)]
pub enum FfiResumeLimit {
    /// Any request (an approval UI, the app): `Invocation::resume`.
    Trusted,
    /// Only a request the frame's actor made on the frame's surface
    /// (`Invocation::resume_by_requester`).
    Requester,
    /// As `Requester`, through one capability's tool (an id or adapter tool
    /// name): only a request for it (`Invocation::resume_through_tool`).
    ThroughTool { id_or_tool_name: String },
}

/// A built registry with its approval store.
#[derive(uniffi::Object)]
pub struct FfiRegistry {
    host: Arc<BindingRegistry>,
    /// Swift has an audit subscriber: audit steps go to Swift.
    audit: bool,
    audit_payloads: bool,
    /// The PostgreSQL audit sink (`attach_postgres_audit`): records are
    /// queued to it from Rust, with or without a Swift subscriber.
    pub(crate) pg_audit: std::sync::OnceLock<Arc<PostgresAuditSink>>,
}

#[uniffi::export]
impl FfiRegistry {
    /// Builds from declarations `[{id, meta, inputSchema?, outputSchema?,
    /// validateInput?, validateOutput?}]`, options `{defaults, policies,
    /// approverMustDiffer}` and a store (`"memory"`, `{"sqlite": path}`).
    /// Fails with `Registry` listing every problem, or `Capability` for a
    /// malformed argument or a store that cannot be opened.
    #[uniffi::constructor]
    pub fn new(
        declarations_json: String,
        options_json: String,
        store_json: String,
        audit: bool,
        audit_payloads: bool,
    ) -> Result<Arc<FfiRegistry>, FfiError> {
        let decls = parse_json(&declarations_json)?;
        let options = parse_json(&options_json)?;
        let store_config = StoreConfig::from_json(&parse_json(&store_json)?)?;
        if !store_config.is_sync() {
            return Err(invalid_input(
                "a PostgreSQL store is opened with `openPostgresRegistry` (asynchronous)",
            ));
        }
        let store = store_config.open_sync()?;
        let host = BindingRegistry::build(&decls, &options, store).map_err(|e| match e {
            BuildError::Invalid(r) => FfiError::from(r),
            BuildError::Setup(c) => FfiError::from(c),
        })?;
        Ok(FfiRegistry::from_host(host, audit, audit_payloads))
    }

    /// Capability ids in registry order: position = capability index.
    pub fn capability_ids(&self) -> Vec<String> {
        self.host
            .registry()
            .capabilities()
            .iter()
            .map(|c| c.id.clone())
            .collect()
    }

    /// The index of a capability id or adapter tool name.
    pub fn resolve(&self, id_or_tool_name: String) -> Option<u32> {
        self.host
            .registry()
            .resolve(&id_or_tool_name)
            .map(|c| c.index)
    }

    /// Starts the capability at `capability_index` and runs it to Swift's
    /// first step (`step_kind`). The core's verdict on the raw input as
    /// Swift measured it ends the call when stage 4 begins, before any hook
    /// sees it (`start_verdict`). A task already `cancelled` stores,
    /// consumes and runs nothing (`Invocation::caller_cancelled`).
    pub fn start(
        &self,
        capability_index: u32,
        surface: u8,
        details: Option<FfiFrameDetails>,
        input: FfiHostInput,
        now_ms: u64,
        cancelled: bool,
    ) -> Result<Arc<FfiInvocation>, FfiError> {
        let frame = frame(surface, details)?;
        let registry = Arc::clone(self.host.registry());
        let limits = start_verdict(input);
        let mut inv = Invocation::start_index_measured(
            registry,
            capability_index,
            frame,
            self.options(now_ms),
            limits,
        );
        if cancelled {
            inv.caller_cancelled(now_ms);
        }
        Ok(self.invocation(inv, now_ms))
    }

    /// Like `start`, by id or adapter tool name (an unknown name ends in
    /// NOT_FOUND and is audited as requested).
    pub fn start_named(
        &self,
        id_or_tool_name: String,
        surface: u8,
        details: Option<FfiFrameDetails>,
        input: FfiHostInput,
        now_ms: u64,
        cancelled: bool,
    ) -> Result<Arc<FfiInvocation>, FfiError> {
        let (frame, limits) = (frame(surface, details)?, start_verdict(input));
        let registry = Arc::clone(self.host.registry());
        let options = self.options(now_ms);
        let mut inv =
            Invocation::start_measured(registry, &id_or_tool_name, frame, options, limits);
        if cancelled {
            inv.caller_cancelled(now_ms);
        }
        Ok(self.invocation(inv, now_ms))
    }

    /// Resumes an approved request (stage 7, then 9–14 with the recorded
    /// surface and actor; the frame gives trace and ids, and — with a
    /// `limit` — the caller's surface and actor the core checks); a task
    /// already `cancelled` consumes nothing (`ResumeLimit::resume`).
    pub fn resume(
        &self,
        approval_id: String,
        surface: u8,
        details: Option<FfiFrameDetails>,
        now_ms: u64,
        limit: FfiResumeLimit,
        cancelled: bool,
    ) -> Result<Arc<FfiInvocation>, FfiError> {
        let frame = frame(surface, details)?;
        let registry = Arc::clone(self.host.registry());
        let opts = self.options(now_ms);
        let inv = limit.resume(registry, &approval_id, frame, opts, cancelled);
        Ok(self.invocation(inv, now_ms))
    }

    /// One approval request as of `now_ms` (`status` the effective one), or `None`.
    pub fn approval(
        &self,
        id: String,
        now_ms: u64,
    ) -> Result<Option<FfiApprovalRequest>, FfiError> {
        Ok(self
            .host
            .approval(&id)?
            .map(|r| FfiApprovalRequest::at(&r, now_ms)))
    }

    /// A page of approval requests as of `now_ms` for a filter
    /// `{capabilityId?, actorId?, status?, limit?, cursor?}` (`status` the
    /// effective one, `expired` included).
    pub fn approvals(
        &self,
        filter_json: String,
        now_ms: u64,
    ) -> Result<Vec<FfiApprovalRequest>, FfiError> {
        let filter = list_filter_from_json(&parse_json(&filter_json)?, now_ms)?;
        let page = self.host.approvals(&filter)?;
        Ok(FfiApprovalRequest::all_at(&page, now_ms))
    }

    /// Approves or rejects; returns the decided request.
    pub fn decide(
        &self,
        id: String,
        approve: bool,
        approver: Option<String>,
        reason: Option<String>,
        now_ms: u64,
    ) -> Result<FfiApprovalRequest, FfiError> {
        let decision = ApprovalDecision::approving(approve);
        let request = self.host.decide(
            &id,
            decision,
            approver.as_deref(),
            reason.as_deref(),
            now_ms,
        )?;
        Ok(FfiApprovalRequest::at(&request, now_ms))
    }

    /// The inspect() report as JSON.
    pub fn inspect(&self) -> Result<String, FfiError> {
        Ok(self.host.registry().inspect().to_json().to_string())
    }

    /// The portable descriptors exposed on `surface` (JSON array).
    pub fn descriptors(&self, surface: String) -> Result<String, FfiError> {
        let surface = Surface::parse(&surface)
            .ok_or_else(|| invalid_input(format!("unknown surface `{surface}`")))?;
        let list = self.host.registry().descriptors(surface);
        Ok(serde_json::Value::Array(list.iter().map(|d| d.to_json()).collect()).to_string())
    }

    /// The same descriptors as one CBOR array (`ffi::act::descriptors_cbor`).
    pub fn descriptors_cbor(&self, surface: String) -> Result<Vec<u8>, FfiError> {
        Ok(orpc_agent_core::ffi::act::descriptors_cbor(
            self.host.registry(),
            &surface,
        )?)
    }
}
