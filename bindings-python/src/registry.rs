//! `NativeRegistry`: the core's `BindingRegistry` (registry + approval
//! store) with what every invocation shares (`Shared`: the clock, the
//! audit subscriber, the PostgreSQL sink, telemetry). This module builds
//! it and starts and resumes calls; its other methods are in
//! `approvals` (requests as an approval UI reads them), `catalog`
//! (indexes, `inspect`, descriptors) and `fast` (the eager fast path).
//!
//! Store operations run with the GIL released (`py.detach`): a SQLite call
//! may wait on the file lock of another process.

mod approvals;
mod catalog;
mod fast;
mod shared;

pub(crate) use approvals::{request_to_py, request_view_to_py};
pub(crate) use shared::Shared;

use std::sync::{Arc, OnceLock};

use orpc_agent_core::ffi::{BindingRegistry, BuildError, ResumeLimit, StoreConfig};
use orpc_agent_core::{CapabilityError, Invocation as CoreInvocation};
use pyo3::exceptions::PyValueError;
use pyo3::gc::{PyTraverseError, PyVisit};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use crate::awaitable;
use crate::errors::{capability_error, registry_error};
use crate::frame::Frame;
use crate::invocation::Invocation;
use crate::limits;

/// `invoke_fast` outcomes beyond the step kinds: the handler suspended
/// (the host continues it on its loop), the validator raised, the handler
/// raised. The host answers these through the general driver loop.
pub use orpc_agent_core::ffi::sentinel::{HANDLER_RAISED, SUSPENDED, VALIDATOR_RAISED};

fn parse_json(text: &str, what: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

fn to_py_err(py: Python<'_>) -> impl Fn(CapabilityError) -> PyErr + '_ {
    move |e| capability_error(py, &e)
}

#[pyclass(module = "orpc_agent._native", name = "NativeRegistry", frozen)]
pub struct NativeRegistry {
    pub(crate) shared: Arc<Shared>,
    /// What `invoke_fast` needs per name the host resolves itself:
    /// `{name: FastPath}`, made once from the Python registry's tuples
    /// (`set_fast_paths`). Looked up here rather than
    /// in Python: the lookup and the unpacking were a tenth of a governed
    /// call's cost in bytecode.
    fast_paths: OnceLock<Py<PyDict>>,
    /// What `invoke`'s awaitable continues in when the fast path did not
    /// end the call: the Python `CapabilityRegistry` (its `_invoke_slow`),
    /// and the frame of a call given none. Set once (`set_invoke_host`).
    invoke_host: OnceLock<(Py<PyAny>, Py<Frame>)>,
}

#[pymethods]
impl NativeRegistry {
    /// Builds the registry from the JSON declarations
    /// (`[{id, meta, inputSchema?, outputSchema?, validateInput?, validateOutput?}]`),
    /// the options (`{defaults, policies, approverMustDiffer}`) and the store
    /// (`"memory"` or `{"sqlite": path}`). Raises `RegistryValidationError`
    /// with every problem.
    #[new]
    #[pyo3(signature = (declarations, options, store, *, audit = None, audit_payloads = false, clock = None, postgres_options = None, audit_postgres = None, telemetry = None, span_payloads = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        declarations: &str,
        options: &str,
        store: &str,
        audit: Option<Py<PyAny>>,
        audit_payloads: bool,
        clock: Option<Py<PyAny>>,
        postgres_options: Option<&str>,
        audit_postgres: Option<(String, String)>,
        telemetry: Option<Py<PyAny>>,
        span_payloads: bool,
    ) -> PyResult<NativeRegistry> {
        let decls = parse_json(declarations, "declarations")?;
        let options = parse_json(options, "options")?;
        let config =
            StoreConfig::from_json(&parse_json(store, "approval_store")?).map_err(to_py_err(py))?;
        let pg_options = parse_json(postgres_options.unwrap_or("null"), "postgres options")?;
        let store = match config {
            StoreConfig::Postgres(url) => crate::postgres::open_store(py, url, &pg_options)?,
            config => py.detach(|| config.open_sync()).map_err(to_py_err(py))?,
        };
        let pg_audit = match audit_postgres {
            Some((url, opts)) => Some(crate::postgres::open_audit(
                py,
                url,
                &parse_json(&opts, "audit postgres options")?,
            )?),
            None => None,
        };
        let host = BindingRegistry::build(&decls, &options, store).map_err(|e| match e {
            BuildError::Invalid(e) => registry_error(py, &e),
            BuildError::Setup(e) => capability_error(py, &e),
        })?;
        Ok(NativeRegistry {
            shared: Arc::new(Shared {
                host,
                clock,
                audit,
                audit_payloads,
                pg_audit,
                span_payloads: span_payloads && telemetry.is_some(),
                telemetry,
            }),
            fast_paths: OnceLock::new(),
            invoke_host: OnceLock::new(),
        })
    }

    fn now_ms(&self, py: Python<'_>) -> u64 {
        self.shared.now_ms(py)
    }

    /// What this object holds of Python, for the garbage collector: the
    /// fast-path callables, the audit subscriber and the clock. A handler
    /// or subscriber that refers back to its registry makes a cycle only
    /// the collector can free (and with it the store's connections).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(paths) = self.fast_paths.get() {
            visit.call(paths)?;
        }
        if let Some((host, frame)) = self.invoke_host.get() {
            visit.call(host)?;
            visit.call(frame)?;
        }
        visit.call(&self.shared.audit)?;
        visit.call(&self.shared.clock)?;
        visit.call(&self.shared.telemetry)?;
        Ok(())
    }

    /// `registry.invoke(name, input, frame)`: a `GovernedCall` awaitable
    /// (see `awaitable`); nothing runs until it is awaited.
    #[pyo3(signature = (id_or_tool_name, input = None, frame = None))]
    fn invoke<'py>(
        slf: &Bound<'py, Self>,
        id_or_tool_name: &Bound<'py, PyAny>,
        input: Option<&Bound<'py, PyAny>>,
        frame: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let none = py.None().into_bound(py);
        let input = input.unwrap_or(&none);
        match frame.filter(|f| !f.is_none()) {
            Some(frame) => awaitable::new_call(slf, id_or_tool_name, input, frame),
            None => {
                let default = &slf.get().invoke_host_pair()?.1;
                awaitable::new_call(slf, id_or_tool_name, input, default.bind(py).as_any())
            }
        }
    }

    /// Sets what `invoke`'s awaitable continues in (once): the Python
    /// registry and the frame of a call given none.
    fn set_invoke_host(&self, host: Py<PyAny>, default_frame: Py<Frame>) -> PyResult<()> {
        self.invoke_host
            .set((host, default_frame))
            .map_err(|_| PyValueError::new_err("the invoke host is already set"))
    }

    /// Starts an invocation by id or adapter tool name (stage 1 in the
    /// core) with the raw `input`, measured against the input limits
    /// before any step.
    fn start_name(
        &self,
        py: Python<'_>,
        name: &str,
        frame: &Frame,
        input: &Bound<'_, PyAny>,
    ) -> Invocation {
        let opts = self.shared.options(py);
        let inv = CoreInvocation::start_measured(
            Arc::clone(self.shared.host.registry()),
            name,
            Arc::clone(&frame.core),
            opts,
            Some(limits::measure(input)),
        );
        Invocation::new(Arc::clone(&self.shared), inv, false)
    }

    /// Resumes an approved request (stage 7, then 9–14 with the recorded
    /// surface and actor). With `by_requester`, only for the frame's actor
    /// on the frame's surface (`Invocation::resume_by_requester`). With
    /// `through_tool` (a capability id or tool name: the resume comes
    /// through that capability's tool, as over MCP) the request must also
    /// be for it, and a frame without an actor id may resume only a request
    /// made by an identical actor without one, in the same session
    /// (`Invocation::resume_through_tool`).
    ///
    /// `cancelled`: the calling task was cancelled before the call (the
    /// core ends it CANCELLED before its consume step: the approval stays
    /// approved).
    #[pyo3(signature = (approval_id, frame, by_requester = false, through_tool = None, cancelled = false))]
    fn resume(
        &self,
        py: Python<'_>,
        approval_id: &str,
        frame: &Frame,
        by_requester: bool,
        through_tool: Option<&str>,
        cancelled: bool,
    ) -> Invocation {
        let opts = self.shared.options(py);
        let registry = Arc::clone(self.shared.host.registry());
        let frame = Arc::clone(&frame.core);
        // The core resolves the tool (one it does not know has no request)
        // and decides what the limit allows.
        let limit = ResumeLimit::from_options(through_tool, by_requester);
        let inv = limit.resume(registry, approval_id, frame, opts, cancelled);
        Invocation::new(Arc::clone(&self.shared), inv, true)
    }
}

impl NativeRegistry {
    /// The Python registry and default frame `set_invoke_host` gave.
    fn invoke_host_pair(&self) -> PyResult<&(Py<PyAny>, Py<Frame>)> {
        self.invoke_host
            .get()
            .ok_or_else(|| PyValueError::new_err("the invoke host is not set"))
    }

    /// The Python registry that continues a call past the fast path.
    pub(crate) fn invoke_host<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.invoke_host_pair()?.0.bind(py).clone())
    }
}
