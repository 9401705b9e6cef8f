//! Delivering an `Audit` step's record in Python: to the PostgreSQL sink
//! (queued, never waiting), to telemetry (the call's span ends with the
//! core's view of it) and to the registry's subscriber. Delivery is not a
//! gate: a subscriber or telemetry hook that raises changes no outcome,
//! and its exception goes to `sys.unraisablehook`.

use orpc_agent_core::Invocation;
use orpc_agent_core::pipeline::Step;
use orpc_agent_core::pipeline::driver::AuditSink;
use pyo3::prelude::*;

use crate::registry::Shared;

/// Hands the record of the `Audit` step `inv` is at to everyone who takes it.
pub(crate) fn deliver(py: Python<'_>, shared: &Shared, inv: &Invocation) {
    let Step::Audit(record) = inv.step() else {
        return;
    };
    if let Some(sink) = &shared.pg_audit {
        // Queued for the sink's writer (src/postgres.rs).
        sink.record(record);
    }
    if let Some(telemetry) = &shared.telemetry {
        // A finished record only.
        if let Some(view) = orpc_agent_core::telemetry::call_telemetry(record) {
            let told = pythonize::pythonize(py, &view)
                .map_err(PyErr::from)
                .and_then(|v| telemetry.bind(py).call1((v,)).map(drop));
            if let Err(e) = told {
                crate::errors::unraisable(e, telemetry.bind(py));
            }
        }
    }
    if let Some(subscriber) = &shared.audit {
        // Serialized straight into Python objects (pythonize drives the
        // record's own `Serialize`: the same keys and omissions as
        // `to_json`, without the intermediate `Value`).
        let delivered = pythonize::pythonize(py, record)
            .map_err(PyErr::from)
            .and_then(|r| subscriber.bind(py).call1((r,)).map(drop));
        if let Err(e) = delivered {
            crate::errors::unraisable(e, subscriber.bind(py));
        }
    }
}
