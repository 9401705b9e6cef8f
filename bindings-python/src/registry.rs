//! `NativeRegistry`: the core's `BindingRegistry` (registry + approval store),
//! the clock, and the audit subscriber — what every invocation shares.
//!
//! Store operations run with the GIL released (`py.detach`): a SQLite call
//! may wait on the file lock of another process.

use std::sync::{Arc, OnceLock};

use orpc_agent_core::approval::{ApprovalRequest, Decision as ApprovalDecision};
use orpc_agent_core::ffi::{BindingRegistry, BuildError, StoreConfig, list_filter_from_json};
use orpc_agent_core::pipeline::{ApprovalInputView, InvokeOptions, StepKind};
use orpc_agent_core::{CapabilityError, Invocation as CoreInvocation, Surface};
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::gc::{PyTraverseError, PyVisit};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde_json::Value;

use crate::awaitable;
use crate::convert::{json_to_py, py_to_json};
use crate::eager;
use crate::errors::{capability_error, registry_error};
use crate::frame::Frame;
use crate::invocation::{DONE_OK, Invocation};
use crate::limits;
use crate::outcome::InvokeOk;

/// `invoke_fast` outcomes beyond the step kinds: the handler suspended
/// (the host continues it on its loop), the validator raised, the handler
/// raised. The host answers these through the general driver loop.
pub use orpc_agent_core::ffi::sentinel::{HANDLER_RAISED, SUSPENDED, VALIDATOR_RAISED};

/// The host callables the fast path performs steps with, per capability
/// (each `None` when the capability has no such step for the fast path).
///
/// One object per name in `fast_paths`, made once by `set_fast_paths`: the
/// hot path reads its fields in place (a type check and borrows), where a
/// tuple cost four item reads, their reference counts and an int
/// extraction per call.
#[pyclass(module = "orpc_agent._native", name = "FastPath", frozen)]
pub(crate) struct FastPath {
    index: u32,
    validate_input: Option<Py<PyAny>>,
    handler: Option<Py<PyAny>>,
    validate_output: Option<Py<PyAny>>,
}

#[pymethods]
impl FastPath {
    /// Its callables, for the garbage collector (a handler that refers back
    /// to its registry makes a cycle through this object).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.validate_input)?;
        visit.call(&self.handler)?;
        visit.call(&self.validate_output)
    }
}

/// A fast path as the Python registry gives it: exactly a 4-tuple.
type FastPathEntry = (u32, Option<Py<PyAny>>, Option<Py<PyAny>>, Option<Py<PyAny>>);

impl FastPath {
    /// From the Python registry's `(index, validate | None, eager handler |
    /// None, validate output | None)`.
    fn from_entry(entry: &Bound<'_, PyAny>) -> PyResult<FastPath> {
        let (index, validate_input, handler, validate_output): FastPathEntry = entry.extract()?;
        Ok(FastPath {
            index,
            validate_input,
            handler,
            validate_output,
        })
    }
}

/// What every invocation of one registry shares.
pub(crate) struct Shared {
    pub(crate) host: BindingRegistry,
    /// A Python callable returning unix milliseconds (tests drive a virtual
    /// clock through it); `None` reads the system clock here, in Rust.
    pub(crate) clock: Option<Py<PyAny>>,
    /// Receives each audit record as a dict, synchronously.
    pub(crate) audit: Option<Py<PyAny>>,
    audit_payloads: bool,
    /// The PostgreSQL audit sink (`audit={"postgres": url}`): records go
    /// to it straight from the core, without a Python dict.
    pub(crate) pg_audit: Option<Arc<orpc_agent_core::pipeline::audit_postgres::PostgresAuditSink>>,
    /// Receives the core's telemetry view of each finished call (a dict;
    /// `orpc_agent.telemetry`), synchronously, in the call's context.
    pub(crate) telemetry: Option<Py<PyAny>>,
    /// Spans carry the (redacted) output (`Telemetry(payloads=True)`).
    span_payloads: bool,
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

    fn options(&self, py: Python<'_>) -> InvokeOptions {
        InvokeOptions {
            now_ms: self.now_ms(py),
            audit: self.audit.is_some() || self.pg_audit.is_some() || self.telemetry.is_some(),
            audit_payloads: self.audit_payloads,
            span_payloads: self.span_payloads,
        }
    }
}

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

    /// The registry index of a capability *id* (not a tool name), resolved
    /// once by the host so later calls start by integer.
    fn index_of(&self, id: &str) -> Option<u32> {
        self.shared
            .host
            .registry()
            .resolve(id)
            .filter(|c| c.id == id)
            .map(|c| c.index)
    }

    /// The registry index an id or adapter tool name resolves to.
    fn resolve(&self, id_or_tool_name: &str) -> Option<u32> {
        self.shared
            .host
            .registry()
            .resolve(id_or_tool_name)
            .map(|c| c.index)
    }

    /// The capability id at `index`.
    fn id_at(&self, index: u32) -> Option<String> {
        self.shared.host.registry().get(index).map(|c| c.id.clone())
    }

    fn now_ms(&self, py: Python<'_>) -> u64 {
        self.shared.now_ms(py)
    }

    /// The hot path in one crossing (DESIGN §4): resolve `name` among the
    /// fast paths (`None` when it is not one: the host starts it by name),
    /// start the capability, and while the steps are the common ones,
    /// perform them with the host callables given — `validate(input)` for
    /// `ValidateInput`, one synchronous step of `handler(value)`'s
    /// coroutine for `RunHandler`. Returns the `InvokeOk` itself when the
    /// call finished (the common case, no tuple to build and unpack), else
    /// `(invocation, kind, a, b)`:
    ///
    /// - a step kind: `(inv, kind, value, output)` — continue the loop;
    /// - `SUSPENDED`: `(inv, SUSPENDED, value, (coroutine, yielded))`;
    /// - `VALIDATOR_RAISED` / `HANDLER_RAISED`: `(inv, code, value, exception)`.
    ///
    /// Rust never awaits: a suspended coroutine goes back to the host's loop.
    pub(crate) fn invoke_fast<'py>(
        &self,
        py: Python<'py>,
        name: &Bound<'py, PyAny>,
        frame: &Frame,
        input: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Some(entry) = self
            .fast_paths
            .get()
            .map(|d| d.bind(py).get_item(name))
            .transpose()?
            .flatten()
        else {
            return Ok(py.None().into_bound(py));
        };
        let path = entry.cast_into_exact::<FastPath>()?;
        self.run_fast(py, path.get(), frame, input)
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

    /// Sets the names `invoke_fast` resolves (once):
    /// `{name: (index, validate input | None, eager handler | None, validate output | None)}`.
    fn set_fast_paths(&self, paths: Bound<'_, PyDict>) -> PyResult<()> {
        let py = paths.py();
        let resolved = PyDict::new(py);
        for (name, entry) in paths.iter() {
            resolved.set_item(name, Bound::new(py, FastPath::from_entry(&entry)?)?)?;
        }
        self.fast_paths
            .set(resolved.unbind())
            .map_err(|_| PyValueError::new_err("fast paths are already set"))
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
    /// made by an identical actor without one
    /// (`Invocation::resume_through_tool`).
    #[pyo3(signature = (approval_id, frame, by_requester = false, through_tool = None))]
    fn resume(
        &self,
        py: Python<'_>,
        approval_id: &str,
        frame: &Frame,
        by_requester: bool,
        through_tool: Option<&str>,
    ) -> Invocation {
        let opts = self.shared.options(py);
        let registry = Arc::clone(self.shared.host.registry());
        let frame = Arc::clone(&frame.core);
        let inv = match (through_tool, by_requester) {
            (Some(name), _) => {
                // An unknown tool can have no request: the index past the
                // last capability makes the core answer APPROVAL_NOT_FOUND
                // (as in Node), consuming nothing.
                let index = registry.resolve(name).map_or_else(
                    || u32::try_from(registry.capabilities().len()).unwrap_or(u32::MAX),
                    |c| c.index,
                );
                CoreInvocation::resume_through_tool(registry, approval_id, index, frame, opts)
            }
            (None, true) => CoreInvocation::resume_by_requester(registry, approval_id, frame, opts),
            (None, false) => CoreInvocation::resume(registry, approval_id, frame, opts),
        };
        Invocation::new(Arc::clone(&self.shared), inv, true)
    }

    /// One approval request as a dict, or `None`.
    fn approval_get<'py>(&self, py: Python<'py>, id: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        let host = &self.shared.host;
        let found = py.detach(|| host.approval(id)).map_err(to_py_err(py))?;
        let now = self.shared.now_ms(py);
        found.map(|r| request_view_to_py(py, &r, now)).transpose()
    }

    /// A page of approval requests: filter `{capabilityId?, actorId?, surface?, status?, limit?, cursor?}`.
    fn approval_list<'py>(
        &self,
        py: Python<'py>,
        filter: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let filter = py_to_json(filter).map_err(to_py_err(py))?;
        let now = self.shared.now_ms(py);
        let filter = list_filter_from_json(&filter, now).map_err(to_py_err(py))?;
        let host = &self.shared.host;
        let page = py
            .detach(|| host.approvals(&filter))
            .map_err(to_py_err(py))?;
        page.iter()
            .map(|r| request_view_to_py(py, r, now))
            .collect()
    }

    /// Approves (`approve=True`) or rejects a pending request.
    #[pyo3(signature = (id, approve, approver = None, reason = None))]
    fn decide<'py>(
        &self,
        py: Python<'py>,
        id: &str,
        approve: bool,
        approver: Option<&str>,
        reason: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let decision = ApprovalDecision::approving(approve);
        let now = self.shared.now_ms(py);
        let host = &self.shared.host;
        let decided = py
            .detach(|| host.decide(id, decision, approver, reason, now))
            .map_err(to_py_err(py))?;
        request_view_to_py(py, &decided, now)
    }

    /// How an approval UI may show a request's input:
    /// `(0, capability_index, info)` — call that capability's
    /// `redact_approval_input` with `info`; `(1, None, None)` — show as
    /// stored; `(2, None, None)` — withhold (capability gone).
    fn approval_input_view<'py>(
        &self,
        py: Python<'py>,
        request: &Bound<'py, PyAny>,
    ) -> PyResult<(u8, Option<u32>, Option<Bound<'py, PyAny>>)> {
        let json = py_to_json(request).map_err(to_py_err(py))?;
        let request = ApprovalRequest::from_view_json(json)
            .map_err(|e| PyValueError::new_err(format!("not an approval request: {e}")))?;
        Ok(match self.shared.host.approval_input_view(&request) {
            ApprovalInputView::Redact {
                capability_index,
                info,
            } => {
                let info = crate::convert::record_to_py(py, &info, "redaction info")?;
                (0, Some(capability_index), Some(info))
            }
            ApprovalInputView::AsStored => (1, None, None),
            // The core's NOT_FOUND (SI-8), as Node and Swift answer it.
            ApprovalInputView::Withhold => {
                return Err(crate::errors::capability_error(
                    py,
                    &orpc_agent_core::pipeline::gate::not_found(&request.capability_id),
                ));
            }
        })
    }

    /// The inspect() report as a dict.
    fn inspect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &self.shared.host.registry().inspect().to_json())
    }

    /// The same descriptors as one CBOR array (`ffi::act::descriptors_cbor`).
    fn descriptors_cbor<'py>(
        &self,
        py: Python<'py>,
        surface: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        orpc_agent_core::ffi::act::descriptors_cbor(self.shared.host.registry(), surface)
            .map(|b| PyBytes::new(py, &b))
            .map_err(|e| crate::errors::capability_error(py, &e))
    }

    /// Portable descriptors of the capabilities exposed on `surface`.
    fn descriptors<'py>(&self, py: Python<'py>, surface: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let surface = Surface::parse(surface)
            .ok_or_else(|| PyValueError::new_err(format!("unknown surface `{surface}`")))?;
        self.shared
            .host
            .registry()
            .descriptors(surface)
            .iter()
            .map(|d| json_to_py(py, &d.to_json()))
            .collect()
    }
}

pub(crate) fn request_to_py<'py>(
    py: Python<'py>,
    r: &ApprovalRequest,
) -> PyResult<Bound<'py, PyAny>> {
    json_to_py(py, &r.to_json())
}

/// A request as an approval UI reads it at `now_ms` (`status` the
/// effective one: `expired` past its expiry).
pub(crate) fn request_view_to_py<'py>(
    py: Python<'py>,
    r: &ApprovalRequest,
    now_ms: u64,
) -> PyResult<Bound<'py, PyAny>> {
    json_to_py(py, &r.to_json_at(now_ms))
}

impl NativeRegistry {
    /// Starts an invocation of the capability at `index` (hot path) with
    /// the raw `input` (measured against the input limits before any step).
    /// Returned by value and built in the caller's slot: the invocation is
    /// a few hundred bytes, and each move of it was a copy on every call.
    #[inline(always)]
    fn start_index(
        &self,
        py: Python<'_>,
        index: u32,
        frame: &Frame,
        input: &Bound<'_, PyAny>,
    ) -> Invocation {
        let opts = self.shared.options(py);
        Invocation::new(
            Arc::clone(&self.shared),
            CoreInvocation::start_index_measured(
                Arc::clone(self.shared.host.registry()),
                index,
                Arc::clone(&frame.core),
                opts,
                Some(limits::measure(input)),
            ),
            false,
        )
    }

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

    /// The body of `invoke_fast` once the name is resolved to its fast path.
    fn run_fast<'py>(
        &self,
        py: Python<'py>,
        path: &FastPath,
        frame: &Frame,
        input: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let validate = path.validate_input.as_ref().map(|v| v.bind(py));
        let handler = path.handler.as_ref().map(|h| h.bind(py));
        let validate_output = path.validate_output.as_ref().map(|v| v.bind(py));
        let step = |inv: Invocation, kind: u8, a: Bound<'py, PyAny>, b: Bound<'py, PyAny>| {
            (inv, kind, a, b).into_pyobject(py).map(Bound::into_any)
        };
        let none = || py.None().into_bound(py);
        let mut inv = self.start_index(py, path.index, frame, &input);
        let mut kind = inv.first_step(py)?;
        let mut value = input;
        if kind == StepKind::ValidateInput.as_u8()
            && let Some(validate) = validate
        {
            match eager::call_one(validate, &value) {
                Ok(v) => {
                    value = v;
                    kind = inv.input_valid(py)?;
                }
                Err(e) => {
                    let raised = e.into_value(py).into_bound(py).into_any();
                    return step(inv, VALIDATOR_RAISED, none(), raised);
                }
            }
        }
        let Some(handler) = handler.filter(|_| kind == StepKind::RunHandler.as_u8()) else {
            return step(inv, kind, value, none());
        };
        let stepped = eager::call_one(handler, &value)
            .and_then(|coro| eager::send_none(&coro).map(|sent| (coro, sent)));
        match stepped {
            Ok((_, eager::Sent::Returned(mut output))) => {
                kind = inv.handler_ok(py)?;
                if kind == StepKind::ValidateOutput.as_u8()
                    && let Some(validate_output) = validate_output
                {
                    // As the driver loop's step: any `Exception` is an
                    // invalid output (its text stays here); anything else
                    // (KeyboardInterrupt) goes up, as from the input's
                    // validator.
                    match eager::call_one(validate_output, &output) {
                        Ok(valid) => {
                            output = valid;
                            kind = inv.output_valid(py)?;
                        }
                        Err(e) if e.is_instance_of::<PyException>(py) => {
                            output = none();
                            kind = inv.output_invalid(py)?;
                        }
                        Err(e) => {
                            let raised = e.into_value(py).into_bound(py).into_any();
                            return step(inv, VALIDATOR_RAISED, none(), raised);
                        }
                    }
                }
                if kind == DONE_OK {
                    return Ok(Bound::new(py, InvokeOk::of(output.unbind()))?.into_any());
                }
                step(inv, kind, value, output)
            }
            Ok((coro, eager::Sent::Yielded(first))) => {
                let pending = (coro, first).into_pyobject(py)?.into_any();
                step(inv, SUSPENDED, value, pending)
            }
            Err(e) => {
                let raised = e.into_value(py).into_bound(py).into_any();
                step(inv, HANDLER_RAISED, value, raised)
            }
        }
    }
}
