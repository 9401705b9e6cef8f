//! [`Shared`]: what every invocation of one registry holds on to — the
//! core's registry and store, the clock, and where audit records and
//! telemetry go.

use std::sync::Arc;

use orpc_agent_core::ffi::BindingRegistry;
use orpc_agent_core::pipeline::InvokeOptions;
use pyo3::prelude::*;

/// What every invocation of one registry shares.
pub(crate) struct Shared {
    pub(crate) host: BindingRegistry,
    /// A Python callable returning unix milliseconds (tests drive a virtual
    /// clock through it); `None` reads the system clock here, in Rust.
    pub(crate) clock: Option<Py<PyAny>>,
    /// Receives each audit record as a dict, synchronously.
    pub(crate) audit: Option<Py<PyAny>>,
    pub(super) audit_payloads: bool,
    /// The PostgreSQL audit sink (`audit={"postgres": url}`): records go
    /// to it straight from the core, without a Python dict.
    pub(crate) pg_audit: Option<Arc<orpc_agent_core::pipeline::audit_postgres::PostgresAuditSink>>,
    /// Receives the core's telemetry view of each finished call (a dict;
    /// `orpc_agent.telemetry`), synchronously, in the call's context.
    pub(crate) telemetry: Option<Py<PyAny>>,
    /// Spans carry the (redacted) output (`Telemetry(payloads=True)`).
    pub(super) span_payloads: bool,
}

impl Shared {
    pub(crate) fn now_ms(&self, py: Python<'_>) -> u64 {
        match &self.clock {
            None => orpc_agent_core::clock::unix_now_ms(),
            Some(clock) => clock
                .bind(py)
                .call0()
                .and_then(|v| v.extract::<u64>())
                .unwrap_or_else(|e| {
                    crate::errors::drop_attached(e);
                    orpc_agent_core::clock::unix_now_ms()
                }),
        }
    }

    pub(super) fn options(&self, py: Python<'_>) -> InvokeOptions {
        InvokeOptions {
            now_ms: self.now_ms(py),
            audit: self.audit.is_some() || self.pg_audit.is_some() || self.telemetry.is_some(),
            audit_payloads: self.audit_payloads,
            span_payloads: self.span_payloads,
        }
    }
}
