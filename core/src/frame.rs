//! The frame: who is calling, from where, under which trace. Built by the
//! adapter from the authenticated transport — never from model input (SI-2,
//! SI-3) — and frozen before input validation (stage 3).
//!
//! The application context is opaque to the core: a binding keeps it next
//! to the invocation and hands it back to hooks; the core never sees it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::vocab::Surface;

/// The caller. `id` is what audit records and approvals name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default)]
    pub roles: Vec<String>,
    #[serde(default)]
    pub attributes: Map<String, Value>,
}

/// W3C trace context carried by the call.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceContext {
    pub traceparent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
}

/// Everything about an invocation that is not its input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Frame {
    pub surface: Surface,
    /// `null` is no actor, as an absent one (the rule for every `null`
    /// the core reads where a value may be left out).
    #[serde(default, deserialize_with = "null_is_anonymous")]
    pub actor: Actor,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// An id as a name: `None` for the empty string, which names nobody (an
/// actor, a session, a request's requester, a decision's approver).
pub fn named(id: Option<&str>) -> Option<&str> {
    id.filter(|s| !s.is_empty())
}

fn null_is_anonymous<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Actor, D::Error> {
    Ok(Option::<Actor>::deserialize(d)?.unwrap_or_default())
}

impl Frame {
    /// A frame on `surface` with an anonymous actor and nothing else.
    pub fn new(surface: Surface) -> Frame {
        Frame {
            surface,
            actor: Actor::default(),
            trace: None,
            request_id: None,
            agent_id: None,
            session_id: None,
        }
    }

    /// Whether the frame names its caller: a non-empty actor id or session
    /// id. Anonymous frames without a session cannot be told apart.
    pub fn names_a_caller(&self) -> bool {
        named(self.actor.id.as_deref()).is_some() || named(self.session_id.as_deref()).is_some()
    }

    /// Whether an actor, request, agent or session id names nobody (see
    /// [`Frame::drop_empty_ids`]).
    pub(crate) fn has_empty_ids(&self) -> bool {
        [
            &self.actor.id,
            &self.request_id,
            &self.agent_id,
            &self.session_id,
        ]
        .into_iter()
        .any(|v| v.is_some() && named(v.as_deref()).is_none())
    }

    /// Stage 3: an id that names nobody is no id at all ([`named`]). One
    /// reading for every rule after it, where `""` was anonymous to some
    /// (who made a request, the pending quota) and an actor to others
    /// (Cedar's `principal.anonymous`, the resume of the requester's own
    /// request, the audit record).
    pub(crate) fn drop_empty_ids(&mut self) {
        for v in [
            &mut self.actor.id,
            &mut self.request_id,
            &mut self.agent_id,
            &mut self.session_id,
        ] {
            if named(v.as_deref()).is_none() {
                *v = None;
            }
        }
    }

    pub fn with_actor(mut self, actor: Actor) -> Frame {
        self.actor = actor;
        self
    }
}
