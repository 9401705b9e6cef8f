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

/// Longest id a frame may carry, in UTF-8 bytes: the actor's, the
/// request's, the agent's, the session's, and each of the actor's roles.
/// Every audit record and approval request keeps them, and some come from
/// outside the app (a model's tool call id, a client's JSON-RPC id).
pub const MAX_FRAME_ID_BYTES: usize = 1024;
/// Most roles an actor may have.
pub const MAX_ACTOR_ROLES: usize = 256;
/// Longest the actor's attributes may be, as compact JSON (bytes).
pub const MAX_ACTOR_ATTRIBUTES_BYTES: usize = 64 * 1024;

/// Counts the bytes of a JSON text without keeping it, and stops the
/// writer once they pass [`MAX_ACTOR_ATTRIBUTES_BYTES`] (its error is the
/// verdict: too large), so a huge value costs no more than the limit.
struct ByteCount(usize);

impl std::io::Write for ByteCount {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        if self.0 > MAX_ACTOR_ATTRIBUTES_BYTES {
            return Err(std::io::Error::other("past the attributes limit"));
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A frame field with a limit, named as in the frame's JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitedField {
    ActorId,
    RequestId,
    AgentId,
    SessionId,
    ActorRoles,
    ActorAttributes,
}

impl LimitedField {
    /// Its name in the frame's JSON (`details.field` of FRAME_TOO_LARGE).
    pub fn name(self) -> &'static str {
        match self {
            LimitedField::ActorId => "actor.id",
            LimitedField::RequestId => "requestId",
            LimitedField::AgentId => "agentId",
            LimitedField::SessionId => "sessionId",
            LimitedField::ActorRoles => "actor.roles",
            LimitedField::ActorAttributes => "actor.attributes",
        }
    }

    /// Its limit, in the words of the refusal's message.
    fn limit(self) -> String {
        match self {
            LimitedField::ActorRoles => {
                format!(
                    "at most {MAX_ACTOR_ROLES} roles of at most {MAX_FRAME_ID_BYTES} bytes each"
                )
            }
            LimitedField::ActorAttributes => {
                format!("at most {MAX_ACTOR_ATTRIBUTES_BYTES} bytes as JSON")
            }
            _ => format!("at most {MAX_FRAME_ID_BYTES} bytes"),
        }
    }

    /// Drops the field from `frame`.
    fn clear(self, frame: &mut Frame) {
        match self {
            LimitedField::ActorId => frame.actor.id = None,
            LimitedField::RequestId => frame.request_id = None,
            LimitedField::AgentId => frame.agent_id = None,
            LimitedField::SessionId => frame.session_id = None,
            LimitedField::ActorRoles => frame.actor.roles.clear(),
            LimitedField::ActorAttributes => frame.actor.attributes.clear(),
        }
    }
}

impl Frame {
    /// The fields past their limits ([`MAX_FRAME_ID_BYTES`],
    /// [`MAX_ACTOR_ROLES`], [`MAX_ACTOR_ATTRIBUTES_BYTES`]); empty when all
    /// are within (the common case costs four length reads and, with
    /// attributes, one counted serialization).
    pub fn oversized_fields(&self) -> Vec<LimitedField> {
        let long = |v: &Option<String>| v.as_ref().is_some_and(|s| s.len() > MAX_FRAME_ID_BYTES);
        let mut fields = Vec::new();
        for (field, v) in [
            (LimitedField::ActorId, &self.actor.id),
            (LimitedField::RequestId, &self.request_id),
            (LimitedField::AgentId, &self.agent_id),
            (LimitedField::SessionId, &self.session_id),
        ] {
            if long(v) {
                fields.push(field);
            }
        }
        let roles = &self.actor.roles;
        if roles.len() > MAX_ACTOR_ROLES || roles.iter().any(|r| r.len() > MAX_FRAME_ID_BYTES) {
            fields.push(LimitedField::ActorRoles);
        }
        if !self.actor.attributes.is_empty() {
            let mut n = ByteCount(0);
            let written = serde_json::to_writer(&mut n, &self.actor.attributes);
            if written.is_err() || n.0 > MAX_ACTOR_ATTRIBUTES_BYTES {
                fields.push(LimitedField::ActorAttributes);
            }
        }
        fields
    }

    /// Stage 3: a frame with a field past its limit is refused — the
    /// call's INVALID_INPUT naming the first such field and its limit,
    /// never quoting it — and those fields are dropped from the frame
    /// first, so no audit record, policy or store keeps them. `fields` is
    /// [`Self::oversized_fields`]'s answer, not empty.
    pub(crate) fn refuse_oversized(&mut self, fields: &[LimitedField]) -> crate::CapabilityError {
        for field in fields {
            field.clear(self);
        }
        let first = fields
            .first()
            .copied()
            .unwrap_or(LimitedField::ActorAttributes);
        crate::CapabilityError::new(
            crate::ErrorCode::InvalidInput,
            format!(
                "invalid frame: {} is larger than a frame allows ({})",
                first.name(),
                first.limit()
            ),
        )
        .with_details(serde_json::json!({ "reason": "FRAME_TOO_LARGE", "field": first.name() }))
    }

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
