//! The PostgreSQL approval store and audit sink for Python (issue 8).
//!
//! PostgreSQL calls really wait. They run on ONE process-wide multi-thread
//! tokio runtime (two workers), created on first use: the pool's connection
//! tasks live there, so every store call of every registry shares it (a
//! runtime per call would stall the pool's connections).
//!
//! Asyncio callers never block their loop: a store call is spawned on the
//! runtime and the caller awaits a [`Pending`] through a Python worker
//! thread that waits with the GIL released (see [`Pending`] for why the
//! runtime's threads never call into Python).
//! Synchronous callers (`approvals.get`, building a registry) block with
//! the GIL released.
//!
//! **fork()**: a tokio runtime and its connections do not survive `fork()`.
//! A registry made before a fork refuses PostgreSQL calls in the child with
//! a clear error (create the registry after forking, e.g. in each worker).

mod approvals;

use std::future::Future;
use std::sync::{Arc, Mutex};

use orpc_agent_core::approval::ApprovalStore;
use orpc_agent_core::ffi::{
    open_postgres, open_postgres_audit, postgres_options_from_json, postgres_runtime,
};
use orpc_agent_core::pipeline::Answer;
use orpc_agent_core::pipeline::audit_postgres::PostgresAuditSink;
use orpc_agent_core::{CapabilityError, ErrorCode};
use pyo3::prelude::*;
use serde_json::Value;
use tokio::runtime::Runtime;

use crate::errors::capability_error;
use crate::invocation::Invocation;
use crate::registry::NativeRegistry;

/// The runtime and the process it was made in.
fn internal(message: impl Into<String>) -> CapabilityError {
    CapabilityError::new(ErrorCode::Internal, message)
}

/// The process-wide runtime (`core::ffi::postgres_runtime`).
fn runtime() -> Result<&'static Runtime, CapabilityError> {
    postgres_runtime()
}

/// Runs `fut` on the runtime and blocks until it is done, GIL released.
fn block_on<T: Send>(
    py: Python<'_>,
    fut: impl Future<Output = Result<T, CapabilityError>> + Send,
) -> PyResult<T> {
    let rt = runtime().map_err(|e| capability_error(py, &e))?;
    py.detach(|| rt.block_on(fut))
        .map_err(|e| capability_error(py, &e))
}

/// A store call running on the runtime. Python awaits it with
/// `await loop.run_in_executor(executor, pending.wait)` (`orpc_agent.postgres`):
/// `wait` blocks a Python worker thread with the GIL released until the
/// runtime is done, then converts the result under the GIL. The runtime's
/// threads never touch Python — a runtime thread inside Python while the
/// interpreter finalizes crashed the process at exit (seen: a decref in a
/// thread that Python was tearing down).
#[pyclass(module = "orpc_agent._native", name = "Pending", frozen)]
pub struct Pending(Mutex<Option<std::sync::mpsc::Receiver<Finish>>>);

/// Makes the Python result of a finished call, under the GIL.
type Finish = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

#[pymethods]
impl Pending {
    /// Blocks (GIL released) until the call is done; its result, or the
    /// CapabilityError it ended in. A second `wait` is INTERNAL.
    fn wait(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let rx = self.0.lock().ok().and_then(|mut r| r.take());
        let rx =
            rx.ok_or_else(|| capability_error(py, &internal("this call was already awaited")))?;
        match py.detach(move || rx.recv()) {
            Ok(finish) => finish(py),
            Err(_) => Err(capability_error(py, &internal("a PostgreSQL task failed"))),
        }
    }
}

/// Spawns `fut` on the runtime; the [`Pending`] to await.
fn spawn<T: Send + 'static>(
    py: Python<'_>,
    fut: impl Future<Output = Result<T, CapabilityError>> + Send + 'static,
    convert: impl FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
) -> PyResult<Py<PyAny>> {
    let rt = runtime().map_err(|e| capability_error(py, &e))?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Finish>(1);
    rt.spawn(async move {
        let result = fut.await;
        let finish: Finish = Box::new(move |py| match result {
            Ok(v) => convert(py, v),
            Err(e) => Err(capability_error(py, &e)),
        });
        // The waiter may be gone (its task cancelled): nothing to tell.
        let _ = tx.send(finish);
    });
    Ok(Py::new(py, Pending(Mutex::new(Some(rx))))?.into_any())
}

/// Opens the approval store of `NativeRegistry::new` (`{"postgres": url}`)
/// on the runtime, blocking with the GIL released.
pub(crate) fn open_store(
    py: Python<'_>,
    url: String,
    options: &Value,
) -> PyResult<Arc<dyn ApprovalStore>> {
    let (opts, _) = postgres_options_from_json(options).map_err(|e| capability_error(py, &e))?;
    let store = block_on(py, async move { open_postgres(&url, opts).await })?;
    Ok(store as Arc<dyn ApprovalStore>)
}

/// Opens an audit sink; its writer task runs on the runtime.
pub(crate) fn open_audit(
    py: Python<'_>,
    url: String,
    options: &Value,
) -> PyResult<Arc<PostgresAuditSink>> {
    let (opts, queue) =
        postgres_options_from_json(options).map_err(|e| capability_error(py, &e))?;
    block_on(
        py,
        async move { open_postgres_audit(&url, opts, queue).await },
    )
}

/// An answer to a store step, made on the runtime, fed back on the loop.
#[pyclass(module = "orpc_agent._native", name = "StoreAnswer", frozen)]
pub struct StoreAnswer(Mutex<Option<Answer>>);

/// `await store_step(inv)` performs the store step invocation `inv` waits
/// on (`PERSIST_APPROVAL` / `CONSUME_APPROVAL`); pass what it resolves to to
/// `store_answered(inv, answer)` for the next step.
#[pyfunction]
pub fn store_step(py: Python<'_>, inv: &Bound<'_, Invocation>) -> PyResult<Py<PyAny>> {
    let op = {
        let inv = inv.borrow();
        let now = inv.shared().now_ms(py);
        inv.shared()
            .host
            .store_op(inv.core(), now)
            .ok_or_else(|| internal("the invocation is not at a store step"))
            .map_err(|e| capability_error(py, &e))?
    };
    spawn(py, async move { Ok(op.run().await) }, |py, answer| {
        Ok(Py::new(py, StoreAnswer(Mutex::new(Some(answer))))?.into_any())
    })
}

/// Feeds the answer of [`store_step`] and returns the next step's kind.
#[pyfunction]
pub fn store_answered(
    py: Python<'_>,
    inv: &Bound<'_, Invocation>,
    answer: &Bound<'_, StoreAnswer>,
) -> PyResult<u8> {
    let taken = answer.get().0.lock().ok().and_then(|mut a| a.take());
    let answer = taken
        .ok_or_else(|| capability_error(py, &internal("this store answer was already used")))?;
    inv.borrow_mut().feed(py, answer)
}

/// The registry's PostgreSQL audit sink's counters:
/// `(written, dropped, failed)`, or `None` without a sink.
#[pyfunction]
pub fn audit_stats(reg: &Bound<'_, NativeRegistry>) -> Option<(u64, u64, u64)> {
    reg.get()
        .shared
        .pg_audit
        .as_ref()
        .map(|s| (s.written(), s.dropped(), s.failed()))
}

/// Waits (GIL released) until every queued audit record is written.
#[pyfunction]
pub fn audit_flush(py: Python<'_>, reg: &Bound<'_, NativeRegistry>) -> PyResult<()> {
    if let Some(sink) = reg.get().shared.pg_audit.clone() {
        block_on(py, async move {
            sink.flush().await;
            Ok(())
        })?;
    }
    Ok(())
}

/// [`audit_flush`] as an awaitable.
#[pyfunction]
pub fn audit_flush_async(py: Python<'_>, reg: &Bound<'_, NativeRegistry>) -> PyResult<Py<PyAny>> {
    let sink = reg.get().shared.pg_audit.clone();
    spawn(
        py,
        async move {
            if let Some(sink) = sink {
                sink.flush().await;
            }
            Ok(())
        },
        |py, ()| Ok(py.None()),
    )
}

/// Everything this module adds to `orpc_agent._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StoreAnswer>()?;
    m.add_class::<Pending>()?;
    for f in [
        wrap_pyfunction!(store_step, m)?,
        wrap_pyfunction!(store_answered, m)?,
        wrap_pyfunction!(approvals::approval_page, m)?,
        wrap_pyfunction!(approvals::approval_page_async, m)?,
        wrap_pyfunction!(approvals::approval_get_async, m)?,
        wrap_pyfunction!(approvals::approval_get_blocking, m)?,
        wrap_pyfunction!(approvals::decide_async, m)?,
        wrap_pyfunction!(approvals::decide_blocking, m)?,
        wrap_pyfunction!(audit_stats, m)?,
        wrap_pyfunction!(audit_flush, m)?,
        wrap_pyfunction!(audit_flush_async, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
