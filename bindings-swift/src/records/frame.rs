//! Conversions between the core's frame and its parts (surface, actor,
//! trace, the details a caller adds) and their records, in both
//! directions, and the record of what a redactor is told.

use orpc_agent_core::act::HashError;
use orpc_agent_core::pipeline::redaction::RedactionInfo;
use orpc_agent_core::{Actor, CapabilityError, Frame, Surface, TraceContext};
use serde_json::{Map, Value};

use super::{FfiActor, FfiFrame, FfiFrameDetails, FfiRedactionInfo, FfiSurface, FfiTrace};
use crate::{FfiError, invalid_input};

impl From<Surface> for FfiSurface {
    fn from(s: Surface) -> FfiSurface {
        match s {
            Surface::Direct => FfiSurface::Direct,
            Surface::AiSdk => FfiSurface::AiSdk,
            Surface::Mcp => FfiSurface::Mcp,
            Surface::Workflow => FfiSurface::Workflow,
            Surface::Test => FfiSurface::Test,
        }
    }
}

impl From<&Actor> for FfiActor {
    fn from(a: &Actor) -> FfiActor {
        let Actor {
            id,
            roles,
            attributes,
        } = a;
        FfiActor {
            id: id.clone(),
            roles: roles.clone(),
            attributes_json: Value::Object(attributes.clone()).to_string(),
        }
    }
}

impl TryFrom<FfiActor> for Actor {
    type Error = FfiError;
    fn try_from(a: FfiActor) -> Result<Actor, FfiError> {
        let attributes: Map<String, Value> = serde_json::from_str(&a.attributes_json)
            .map_err(|e| invalid_input(format!("actor attributes are not a JSON object: {e}")))?;
        Ok(Actor {
            id: a.id,
            roles: a.roles,
            attributes,
        })
    }
}

impl From<&TraceContext> for FfiTrace {
    fn from(t: &TraceContext) -> FfiTrace {
        let TraceContext {
            traceparent,
            tracestate,
        } = t;
        FfiTrace {
            traceparent: traceparent.clone(),
            tracestate: tracestate.clone(),
        }
    }
}

impl From<FfiTrace> for TraceContext {
    fn from(t: FfiTrace) -> TraceContext {
        TraceContext {
            traceparent: t.traceparent,
            tracestate: t.tracestate,
        }
    }
}

impl FfiFrameDetails {
    /// The core's frame on `surface` with these details.
    pub(crate) fn into_frame(self, surface: Surface) -> Result<Frame, FfiError> {
        if let Some(at) = self.attributes_non_finite_at {
            // The actor's own pointer, as Python's and Node's refusals name it.
            let path = format!("/attributes{at}");
            return Err(CapabilityError::from(HashError::NonFinite { path }).into());
        }
        Ok(Frame {
            surface,
            actor: self.actor.try_into()?,
            trace: self.trace.map(Into::into),
            request_id: self.request_id,
            agent_id: self.agent_id,
            session_id: self.session_id,
        })
    }
}

impl From<&Frame> for FfiFrame {
    fn from(f: &Frame) -> FfiFrame {
        let Frame {
            surface,
            actor,
            trace,
            request_id,
            agent_id,
            session_id,
        } = f;
        FfiFrame {
            surface: (*surface).into(),
            details: FfiFrameDetails {
                actor: actor.into(),
                attributes_non_finite_at: None,
                trace: trace.as_ref().map(Into::into),
                request_id: request_id.clone(),
                agent_id: agent_id.clone(),
                session_id: session_id.clone(),
            },
        }
    }
}

impl From<RedactionInfo<'_>> for FfiRedactionInfo {
    fn from(i: RedactionInfo<'_>) -> FfiRedactionInfo {
        let RedactionInfo {
            surface,
            capability_id,
            actor,
        } = i;
        FfiRedactionInfo {
            surface: surface.into(),
            capability_id: capability_id.to_owned(),
            actor: actor.into(),
        }
    }
}
