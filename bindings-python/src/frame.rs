//! `Frame`: who calls, from which surface, under which trace — built by the
//! adapter from the authenticated transport, never from model input (SI-2).
//!
//! A `Frame` is immutable and reusable: a host that serves one surface
//! builds it once and passes it to every call, so the hot path converts
//! nothing (the core gets a clone of the Rust frame).

use std::sync::Arc;

use orpc_agent_core::Surface;
use orpc_agent_core::frame::{Actor, Frame as CoreFrame, TraceContext};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::py_to_json;

#[pyclass(module = "orpc_agent._native", name = "Frame", frozen)]
pub struct Frame {
    /// Shared with every invocation made with this frame (no copy per call).
    pub(crate) core: Arc<CoreFrame>,
    /// The application context: opaque to the core, handed back to hooks.
    pub(crate) context: Py<PyAny>,
}

fn parse_surface(s: &str) -> PyResult<Surface> {
    Surface::parse(s).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown surface `{s}` (expected one of {})",
            Surface::expected()
        ))
    })
}

#[pymethods]
impl Frame {
    #[new]
    #[pyo3(signature = (surface, *, actor = None, traceparent = None, tracestate = None, request_id = None, agent_id = None, session_id = None, context = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        surface: Option<&str>,
        actor: Option<&Bound<'_, PyAny>>,
        traceparent: Option<String>,
        tracestate: Option<String>,
        request_id: Option<String>,
        agent_id: Option<String>,
        session_id: Option<String>,
        context: Option<Py<PyAny>>,
    ) -> PyResult<Frame> {
        let actor = match actor {
            None => Actor::default(),
            Some(a) if a.is_none() => Actor::default(),
            Some(a) => {
                let json = py_to_json(a).map_err(|e| PyValueError::new_err(e.message))?;
                serde_json::from_value::<Actor>(json).map_err(|e| {
                    PyValueError::new_err(format!(
                        "actor must be {{id?: str, roles?: [str], attributes?: dict}}: {e}"
                    ))
                })?
            }
        };
        let trace = traceparent.map(|traceparent| TraceContext {
            traceparent,
            tracestate,
        });
        Ok(Frame {
            core: Arc::new(CoreFrame {
                surface: parse_surface(surface.ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "a frame names its surface: one of {}",
                        Surface::expected()
                    ))
                })?)?,
                actor,
                trace,
                request_id,
                agent_id,
                session_id,
            }),
            context: context.unwrap_or_else(|| py.None()),
        })
    }

    #[getter]
    fn surface(&self) -> &'static str {
        self.core.surface.as_str()
    }

    /// The actor as a dict `{id?, roles, attributes}` (a copy: the frame is frozen).
    #[getter]
    fn actor<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::convert::record_to_py(py, &self.core.actor, "actor")
    }

    #[getter]
    fn actor_id(&self) -> Option<&str> {
        self.core.actor.id.as_deref()
    }

    #[getter]
    fn traceparent(&self) -> Option<&str> {
        self.core.trace.as_ref().map(|t| t.traceparent.as_str())
    }

    #[getter]
    fn tracestate(&self) -> Option<&str> {
        self.core
            .trace
            .as_ref()
            .and_then(|t| t.tracestate.as_deref())
    }

    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.core.request_id.as_deref()
    }

    #[getter]
    fn agent_id(&self) -> Option<&str> {
        self.core.agent_id.as_deref()
    }

    #[getter]
    fn session_id(&self) -> Option<&str> {
        self.core.session_id.as_deref()
    }

    #[getter]
    fn context(&self, py: Python<'_>) -> Py<PyAny> {
        self.context.clone_ref(py)
    }

    /// Surface, actor id and request id, as Python literals, each cut at
    /// 64 characters (a request id may be a client's); never the actor's
    /// attributes or the context (the application's).
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let lit = |v: Option<&str>| -> PyResult<String> {
            match v {
                Some(s) if s.chars().count() > 64 => {
                    let cut: String = s.chars().take(64).collect();
                    Ok(format!("{}…", pyo3::types::PyString::new(py, &cut).repr()?))
                }
                Some(s) => Ok(pyo3::types::PyString::new(py, s).repr()?.to_string()),
                None => Ok("None".to_owned()),
            }
        };
        Ok(format!(
            "Frame(surface={}, actor_id={}, request_id={})",
            lit(Some(self.core.surface.as_str()))?,
            lit(self.core.actor.id.as_deref())?,
            lit(self.core.request_id.as_deref())?
        ))
    }
}
