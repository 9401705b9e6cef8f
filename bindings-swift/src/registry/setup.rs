//! How an `FfiRegistry` is put together around a core `BindingRegistry`
//! (by its constructor or `open_postgres_registry`) and what each of its
//! invocations starts with: the audit route and invoke options, and the
//! `FfiInvocation` around a core one.

use std::sync::Arc;

use orpc_agent_core::ffi::{AuditRoute, BindingRegistry};
use orpc_agent_core::pipeline::driver::AuditSink;
use orpc_agent_core::{Invocation, InvokeOptions};

use super::FfiRegistry;
use crate::invocation::FfiInvocation;

impl FfiRegistry {
    /// A registry on a store opened elsewhere (`postgres.rs`).
    pub(crate) fn from_host(
        host: BindingRegistry,
        audit: bool,
        audit_payloads: bool,
    ) -> Arc<FfiRegistry> {
        Arc::new(FfiRegistry {
            host: Arc::new(host),
            audit,
            audit_payloads,
            pg_audit: std::sync::OnceLock::new(),
        })
    }

    /// Where this registry's audit records go, for a new invocation.
    fn audit_route(&self) -> AuditRoute {
        AuditRoute {
            sink: self
                .pg_audit
                .get()
                .map(|s| Arc::clone(s) as Arc<dyn AuditSink>),
            to_host: self.audit,
        }
    }

    pub(crate) fn host(&self) -> &BindingRegistry {
        &self.host
    }

    pub(super) fn options(&self, now_ms: u64) -> InvokeOptions {
        InvokeOptions {
            now_ms,
            audit: self.audit || self.pg_audit.get().is_some(),
            audit_payloads: self.audit_payloads,
            span_payloads: false,
        }
    }

    /// A core invocation of this registry, as the object Swift drives.
    pub(super) fn invocation(&self, inv: Invocation, now_ms: u64) -> Arc<FfiInvocation> {
        FfiInvocation::new(Arc::clone(&self.host), inv, now_ms, self.audit_route())
    }
}
