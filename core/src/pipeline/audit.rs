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
//! operator should). It never carries the input, nor the input hash (an
//! unsalted hash of the input, from which a redacted value with few
//! possible values could be recovered: issue 15), and carries the output
//! only when the host opted in, and then only the redacted output (SI-10).
//! When a handler failed with a plain error, `failure` holds the error's
//! class as the binding read it (`TypeError`, `ValueError`), bounded: what
//! an operator needs to find the failure, never shown to the caller or the
//! model. The error's message is not recorded — it may quote the input or
//! a secret, and the record is durable and widely read (SI-10) — the
//! binding gives it, with the stack, to the operator's logger.
//! Serialized as camelCase JSON.

use serde::Serialize;
use serde_json::Value;

use super::policies::PolicyScope;
use super::stage::Stage;
use crate::meta::Surface;
use crate::policy::PolicyMode;

/// The most of a handler's error class an audit record keeps (UTF-8
/// bytes): a qualified class name fits; a message smuggled in does not.
pub const FAILURE_TEXT_MAX_BYTES: usize = 200;

/// What the record keeps of the class a binding reports: the text when it
/// has the shape of a class name (`TypeError`, `orders.DbError`,
/// `Module.Outer.Inner`, `Foo<Bar>`: letters, digits, `_ $ . : < >`, no
/// spaces, at most [`FAILURE_TEXT_MAX_BYTES`]), else `Error` — a message a
/// binding passed by mistake (it may quote data: SI-10) is never kept.
/// `None` for an empty text.
pub fn failure_text(text: &str) -> Option<String> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let class_shaped = text.len() <= FAILURE_TEXT_MAX_BYTES
        && text
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | ':' | '<' | '>'));
    Some(if class_shaped {
        text.to_owned()
    } else {
        "Error".to_owned()
    })
}

/// Which event of an invocation a record reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AuditEvent {
    /// Stage 10: execution is about to start.
    Started,
    /// Stage 14 (or the stage it failed at): the invocation is over.
    Finished,
}

impl AuditEvent {
    pub const ALL: [AuditEvent; 2] = [AuditEvent::Started, AuditEvent::Finished];

    /// The wire spelling (`started`, `finished`), as serialized.
    pub const fn as_str(self) -> &'static str {
        match self {
            AuditEvent::Started => "started",
            AuditEvent::Finished => "finished",
        }
    }
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
    /// Operator-only: the class of a handler's plain error (`"TypeError"`),
    /// at most [`FAILURE_TEXT_MAX_BYTES`]; the caller got only
    /// EXECUTION_FAILED's generic text. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// The redacted output, only with `audit_payloads` and only on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// The redacted output for the call's span, only with `span_payloads`
    /// and only on success. Never serialized: an audit subscriber or sink
    /// sees `output` alone, so opting spans in does not opt audit in.
    #[serde(skip)]
    pub span_output: Option<Value>,
}

impl AuditRecord {
    /// The record's JSON keys, in the order of the object and of [`AuditRow`].
    pub const FIELDS: [&'static str; 20] = [
        "event",
        "capabilityId",
        "requested",
        "surface",
        "actorId",
        "resumed",
        "policies",
        "approvalId",
        "attempts",
        "startedAt",
        "durationMs",
        "outcome",
        "stage",
        "traceparent",
        "tracestate",
        "requestId",
        "agentId",
        "sessionId",
        "failure",
        "output",
    ];

    /// The keys the object leaves out when they have no value (their row
    /// element is `null`; `output`'s is `[value]` when present, since the
    /// redacted output may itself be `null`).
    pub const OMITTED_WHEN_ABSENT: [&'static str; 4] =
        ["requested", "tracestate", "failure", "output"];

    /// The record as JSON (camelCase), for bindings and vectors.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The record as a row: see [`AuditRow`].
    pub fn row(&self) -> AuditRow<'_> {
        AuditRow(self)
    }
}

/// An [`AuditRecord`] serialized as a JSON array of its values in
/// [`AuditRecord::FIELDS`] order, for a binding that builds the object
/// itself with a fixed shape: in V8, parsing the array and building the
/// object costs less than half of parsing the object (≈ 0.5 vs 1.1 µs per
/// record), and every governed call with an audit subscriber makes two.
/// An absent optional value is `null`; the output, when present, is
/// wrapped (`[output]`) so a `null` output stays distinct from none.
pub struct AuditRow<'a>(&'a AuditRecord);

impl Serialize for AuditRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        // Destructured in full: a field added to the record does not
        // compile until it has its place in the row (and in FIELDS).
        let AuditRecord {
            event,
            capability_id,
            requested,
            surface,
            actor_id,
            resumed,
            policies,
            approval_id,
            attempts,
            started_at,
            duration_ms,
            outcome,
            stage,
            traceparent,
            tracestate,
            request_id,
            agent_id,
            session_id,
            failure,
            output,
            span_output: _, // never stored: see the field
        } = self.0;
        let mut t = s.serialize_tuple(AuditRecord::FIELDS.len())?;
        t.serialize_element(event)?;
        t.serialize_element(capability_id)?;
        t.serialize_element(requested)?;
        t.serialize_element(surface)?;
        t.serialize_element(actor_id)?;
        t.serialize_element(resumed)?;
        t.serialize_element(policies)?;
        t.serialize_element(approval_id)?;
        t.serialize_element(attempts)?;
        t.serialize_element(started_at)?;
        t.serialize_element(duration_ms)?;
        t.serialize_element(outcome)?;
        t.serialize_element(stage)?;
        t.serialize_element(traceparent)?;
        t.serialize_element(tracestate)?;
        t.serialize_element(request_id)?;
        t.serialize_element(agent_id)?;
        t.serialize_element(session_id)?;
        t.serialize_element(failure)?;
        t.serialize_element(&output.as_ref().map(std::slice::from_ref))?;
        t.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyMode;
    use serde_json::{Map, json};

    /// The object a binding builds from a row: FIELDS zipped with the
    /// values, absent optionals left out, the output unwrapped.
    fn object_from_row(row: &Value) -> Value {
        let mut object = Map::new();
        let values = row.as_array().map(Vec::as_slice).unwrap_or_default();
        assert_eq!(values.len(), AuditRecord::FIELDS.len());
        for (key, value) in AuditRecord::FIELDS.iter().zip(values) {
            let omitted = AuditRecord::OMITTED_WHEN_ABSENT.contains(key);
            match (*key, value) {
                (_, Value::Null) if omitted => {}
                ("output", Value::Array(wrapped)) => {
                    object.insert((*key).into(), wrapped.first().cloned().unwrap_or_default());
                }
                _ => {
                    object.insert((*key).into(), value.clone());
                }
            }
        }
        Value::Object(object)
    }

    fn record() -> AuditRecord {
        AuditRecord {
            event: AuditEvent::Finished,
            capability_id: None,
            requested: None,
            surface: Surface::Mcp,
            actor_id: None,
            resumed: false,
            policies: vec![],
            approval_id: None,
            attempts: 0,
            started_at: 1,
            duration_ms: 0,
            outcome: None,
            stage: Stage::Resolve,
            traceparent: None,
            tracestate: None,
            request_id: None,
            agent_id: None,
            session_id: None,
            failure: None,
            output: None,
            span_output: None,
        }
    }

    #[test]
    fn a_failure_keeps_only_a_class_name() {
        assert_eq!(failure_text("  "), None);
        for class in [
            "TypeError",
            "orders.DbError",
            "Outer.Inner",
            "Foo<Bar>",
            "_Private",
            "thrown",
        ] {
            assert_eq!(failure_text(class).as_deref(), Some(class));
        }
        // A message passed where the class belongs is not kept (SI-10).
        for message in [
            "connect failed: password hunter2",
            "SENTINEL-8c1f-unredacted",
            "Error: x",
            "4111 1111",
            &"A".repeat(FAILURE_TEXT_MAX_BYTES + 1),
        ] {
            assert_eq!(failure_text(message).as_deref(), Some("Error"), "{message}");
        }
    }

    #[test]
    fn a_row_is_the_object_in_field_order() {
        let full = AuditRecord {
            event: AuditEvent::Started,
            capability_id: Some("orders.refund".into()),
            requested: Some("orders_refund".into()),
            actor_id: Some("alice \"quoted\"".into()),
            resumed: true,
            policies: vec![PolicyRecord {
                scope: PolicyScope::Runtime,
                index: 0,
                name: Some("business-hours".into()),
                mode: PolicyMode::Enforce,
                host: true,
                decision: "allow",
                reason: None,
                approval_type: None,
                failed: false,
            }],
            approval_id: Some("apr_1".into()),
            attempts: 2,
            duration_ms: 7,
            outcome: Some("ok"),
            stage: Stage::Handler,
            traceparent: Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()),
            tracestate: Some("k=v".into()),
            request_id: Some("r".into()),
            agent_id: Some("a".into()),
            session_id: Some("s".into()),
            failure: Some("TypeError".into()),
            output: Some(json!({"refunded": 5})),
            ..record()
        };
        let null_output = AuditRecord {
            output: Some(Value::Null),
            ..record()
        };
        for r in [record(), full, null_output] {
            let row = serde_json::to_value(r.row()).unwrap_or_default();
            let object = r.to_json();
            assert_eq!(object_from_row(&row), object);
            // Same keys in the same order: a subscriber that logs
            // JSON.stringify(record) sees the text it always saw.
            assert_eq!(
                serde_json::to_string(&object_from_row(&row)).unwrap_or_default(),
                serde_json::to_string(&object).unwrap_or_default()
            );
        }
    }
}
