//! Audit records (issue 4 item 8).
//!
//! Every invocation produces exactly one `finished` record — also when it
//! fails early (NOT_FOUND, INVALID_INPUT, POLICY_DENIED…) or ends pending an
//! approval. An invocation that reaches stage 10 first emits a `started`
//! event: the same schema with `event: "started"`, no outcome and
//! `stage: 10`, so a subscriber can see long-running calls begin. A
//! subscriber that wants "one line per call" keeps only `finished`.
//!
//! The record is operator-facing. It names the capability even when the
//! caller got NOT_FOUND for an unexposed one (the caller cannot tell; the
//! operator should). It never carries the input (the input hash binds it),
//! and carries the output only when the host opted in, and then only the
//! redacted output (SI-10). Serialized as camelCase JSON.

use serde::Serialize;
use serde_json::Value;

use super::policies::PolicyScope;
use super::stage::Stage;
use crate::meta::Surface;
use crate::policy::PolicyMode;

/// Which event of an invocation a record reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AuditEvent {
    /// Stage 10: execution is about to start.
    Started,
    /// Stage 14 (or the stage it failed at): the invocation is over.
    Finished,
}

/// One policy decision, enforced or shadow.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyRecord {
    pub scope: PolicyScope,
    /// Position in its list (runtime `policies` or the capability's).
    pub index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub mode: PolicyMode,
    /// A host callback (as opposed to a declarative matcher).
    pub host: bool,
    /// `allow`, `deny`, `requireApproval` or `abstain`. A failed host
    /// policy is recorded as `deny` with `failed: true`.
    pub decision: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_type: Option<String>,
    /// The host policy threw or timed out (its message is not recorded: it
    /// may quote the input).
    pub failed: bool,
}

/// One audit event. See the module doc for what is and is never in it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    pub event: AuditEvent,
    /// The resolved capability; `None` when nothing resolved.
    pub capability_id: Option<String>,
    /// The id or tool name the caller asked for (`None` on resume).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// The surface the call ran on (the recorded one on resume).
    pub surface: Surface,
    pub actor_id: Option<String>,
    /// This invocation resumed an approved request.
    pub resumed: bool,
    /// Every policy evaluated, in order, shadow ones included.
    pub policies: Vec<PolicyRecord>,
    pub approval_id: Option<String>,
    /// Present when the core computed it (approval gate, resume).
    pub input_hash: Option<String>,
    /// Handler attempts made (0 if the handler never ran).
    pub attempts: u32,
    /// Host clock at the start (unix ms).
    pub started_at: u64,
    /// From the start to the last clock reading the host supplied.
    pub duration_ms: u64,
    /// `"ok"`, `"approval_required"` or an error code; `None` on `started`.
    pub outcome: Option<&'static str>,
    /// The stage reached: 14 on success, else where it stopped (1–14).
    pub stage: Stage,
    pub traceparent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
    pub request_id: Option<String>,
    pub agent_id: Option<String>,
    pub session_id: Option<String>,
    /// The redacted output, only with `audit_payloads` and only on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
}

impl AuditRecord {
    /// The record as JSON (camelCase), for bindings and vectors.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}
