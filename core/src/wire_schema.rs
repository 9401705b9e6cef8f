//! One JSON Schema (draft 2020-12) for the records the core hands every
//! binding in their JSON form (issue 16): a frame and its actor and trace,
//! what a redactor is told, an approval request as an approval UI reads it,
//! a page of them, an audit record and its policy decisions, and a
//! capability error.
//!
//! It is written from the core's own lists — surfaces, statuses, error
//! codes and kinds, policy scopes and modes, decisions, the audit record's
//! fields and the ones it omits when absent — so a value added to one of
//! them is in the schema at once; the tests below hold each record's
//! properties to what its serializer writes. `cargo run -p orpc-agent-core
//! --example mirrors` writes it to `schema/wire.schema.json`, where each
//! binding's tests check their type definitions and the values they deliver
//! against it (Node: the public TypeScript types against types generated
//! from it, and records through ajv; Python: records through `jsonschema`
//! and the dataclasses' fields; Swift: its typed records' fields).

use serde_json::{Map, Value, json};

use crate::approval::EffectiveStatus;
use crate::error::{ErrorCode, ErrorKind};
use crate::meta::Surface;
use crate::pipeline::audit::{AuditEvent, AuditRecord};
use crate::pipeline::policies::PolicyScope;
use crate::pipeline::stage::Stage;
use crate::pipeline::step::Decision;
use crate::policy::{DecisionKind, PolicyMode};

/// The schema's `$id`.
pub const SCHEMA_ID: &str = "https://orpc-agent.dev/schema/wire.schema.json";

/// The records it defines, by their `$defs` name.
pub const RECORDS: [&str; 12] = [
    "Surface",
    "Actor",
    "TraceContext",
    "Frame",
    "RedactionInfo",
    "ApprovalStatus",
    "ApprovalRequest",
    "ApprovalPage",
    "PolicyRecord",
    "AuditRecord",
    "ErrorCode",
    "CapabilityError",
];

fn string() -> Value {
    json!({"type": "string"})
}

fn nullable_string() -> Value {
    json!({"type": ["string", "null"]})
}

fn count() -> Value {
    json!({"type": "integer", "minimum": 0})
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/$defs/{name}")})
}

fn names<'a>(values: impl IntoIterator<Item = &'a str>) -> Value {
    json!({"enum": values.into_iter().collect::<Vec<_>>()})
}

/// An object with exactly `properties`, of which `required` must be there.
fn object(description: &str, properties: Vec<(&str, Value)>, required: &[&str]) -> Value {
    let mut props = Map::new();
    for (name, schema) in properties {
        props.insert(name.to_owned(), schema);
    }
    json!({
        "description": description,
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    })
}

fn audit_record() -> Value {
    let outcome = {
        let mut outcomes = vec!["ok", "approval_required"];
        outcomes.extend(ErrorCode::ALL.iter().map(|c| c.as_str()));
        json!({"anyOf": [{"type": "null"}, {"enum": outcomes}]})
    };
    let properties = AuditRecord::FIELDS
        .iter()
        .map(|&field| {
            let schema = match field {
                "event" => names(AuditEvent::ALL.iter().map(|e| e.as_str())),
                "surface" => reference("Surface"),
                "resumed" => json!({"type": "boolean"}),
                "policies" => json!({"type": "array", "items": reference("PolicyRecord")}),
                "attempts" | "startedAt" | "durationMs" => count(),
                "outcome" => outcome.clone(),
                "stage" => json!({
                    "type": "integer",
                    "minimum": Stage::ALL[0].number(),
                    "maximum": Stage::ALL[Stage::ALL.len() - 1].number(),
                }),
                "requested" | "tracestate" | "failure" => string(),
                // The redacted output: any JSON value.
                "output" => json!({}),
                _ => nullable_string(),
            };
            (field, schema)
        })
        .collect();
    let required: Vec<&str> = AuditRecord::FIELDS
        .iter()
        .copied()
        .filter(|f| !AuditRecord::OMITTED_WHEN_ABSENT.contains(f))
        .collect();
    object(
        "One audit record (docs/decisions.md, audit schema).",
        properties,
        &required,
    )
}

/// The whole schema document.
pub fn document() -> Value {
    let decisions: Vec<&str> = DecisionKind::ALL
        .iter()
        .map(|d| d.as_str())
        .chain([Decision::Abstain.as_str()])
        .collect();
    let defs: Vec<(&str, Value)> = vec![
        ("Surface", names(Surface::ALL.iter().map(|s| s.as_str()))),
        (
            "Actor",
            object(
                "The caller, from the authenticated transport (SI-3).",
                vec![
                    ("id", string()),
                    ("roles", json!({"type": "array", "items": string()})),
                    ("attributes", json!({"type": "object"})),
                ],
                &["roles", "attributes"],
            ),
        ),
        (
            "TraceContext",
            object(
                "W3C trace context.",
                vec![("traceparent", string()), ("tracestate", string())],
                &["traceparent"],
            ),
        ),
        (
            "Frame",
            object(
                "Everything about a call that is not its input.",
                vec![
                    ("surface", reference("Surface")),
                    ("actor", reference("Actor")),
                    ("trace", reference("TraceContext")),
                    ("requestId", string()),
                    ("agentId", string()),
                    ("sessionId", string()),
                ],
                &["surface", "actor"],
            ),
        ),
        (
            "RedactionInfo",
            object(
                "What a redactor is told (DESIGN §6).",
                vec![
                    ("surface", reference("Surface")),
                    ("capabilityId", string()),
                    ("actor", reference("Actor")),
                ],
                &["surface", "capabilityId", "actor"],
            ),
        ),
        (
            "ApprovalStatus",
            names(EffectiveStatus::ALL.iter().map(|s| s.as_str())),
        ),
        (
            "ApprovalRequest",
            object(
                "An approval request as an approval UI reads it (its status as of the read).",
                vec![
                    ("id", string()),
                    ("capabilityId", string()),
                    ("input", json!({})),
                    ("surface", reference("Surface")),
                    ("actor", reference("Actor")),
                    ("type", string()),
                    ("reason", string()),
                    ("createdAt", count()),
                    ("expiresAt", count()),
                    ("status", reference("ApprovalStatus")),
                    ("decidedBy", string()),
                    ("decidedAt", count()),
                    ("decisionReason", string()),
                    ("sessionId", string()),
                ],
                &[
                    "id",
                    "capabilityId",
                    "input",
                    "surface",
                    "actor",
                    "createdAt",
                    "expiresAt",
                    "status",
                ],
            ),
        ),
        (
            "ApprovalPage",
            object(
                "One page of approval requests; `nextCursor` is null on the last.",
                vec![
                    (
                        "requests",
                        json!({"type": "array", "items": reference("ApprovalRequest")}),
                    ),
                    ("nextCursor", nullable_string()),
                ],
                &["requests", "nextCursor"],
            ),
        ),
        (
            "PolicyRecord",
            object(
                "One policy decision of an audit record, enforced or shadow.",
                vec![
                    (
                        "scope",
                        names([
                            PolicyScope::Runtime.as_str(),
                            PolicyScope::Capability.as_str(),
                        ]),
                    ),
                    ("index", count()),
                    ("name", string()),
                    ("mode", names(PolicyMode::ALL.iter().map(|m| m.as_str()))),
                    ("host", json!({"type": "boolean"})),
                    ("decision", names(decisions)),
                    ("reason", string()),
                    ("approvalType", string()),
                    ("failed", json!({"type": "boolean"})),
                ],
                &["scope", "index", "mode", "host", "decision", "failed"],
            ),
        ),
        ("AuditRecord", audit_record()),
        (
            "ErrorCode",
            names(ErrorCode::ALL.iter().map(|c| c.as_str())),
        ),
        (
            "CapabilityError",
            object(
                "A capability error in its JSON form.",
                vec![
                    ("code", reference("ErrorCode")),
                    ("message", string()),
                    ("retryable", json!({"type": "boolean"})),
                    ("kind", names(ErrorKind::ALL.iter().map(|k| k.as_str()))),
                    ("details", json!({})),
                ],
                &["code", "message", "retryable", "kind"],
            ),
        ),
    ];
    let mut map = Map::new();
    for (name, schema) in defs {
        map.insert(name.to_owned(), schema);
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "orpc-agent wire records",
        "description": "Generated by `cargo run -p orpc-agent-core --example mirrors` from the core's lists; do not edit.",
        "$defs": map,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::approval::{ApprovalRequest, ApprovalStatus};
    use crate::frame::{Actor, Frame, TraceContext};
    use crate::pipeline::audit::PolicyRecord;
    use crate::pipeline::redaction::RedactionInfo;

    fn def(name: &str) -> Value {
        document()["$defs"][name].clone()
    }

    fn properties(name: &str) -> BTreeSet<String> {
        def(name)["properties"]
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn required(name: &str) -> BTreeSet<String> {
        def(name)["required"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn keys(v: &Value) -> BTreeSet<String> {
        v.as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn actor() -> Actor {
        Actor {
            id: Some("ann".into()),
            roles: vec!["clerk".into()],
            attributes: serde_json::Map::new(),
        }
    }

    fn full_request() -> ApprovalRequest {
        ApprovalRequest {
            id: "apr_0".into(),
            capability_id: "c".into(),
            input_hash: "h".into(),
            input: json!({"a": 1}),
            surface: Surface::Mcp,
            actor: actor(),
            approval_type: Some("t".into()),
            reason: Some("r".into()),
            created_at_ms: 1,
            expires_at_ms: 2,
            status: ApprovalStatus::Approved,
            decided_by: Some("boss".into()),
            decided_at_ms: Some(1),
            decision_reason: Some("ok".into()),
            session_id: Some("s".into()),
        }
    }

    /// Every record defined, each an object with only known properties or
    /// a list of names.
    #[test]
    fn every_record_is_defined() {
        let doc = document();
        let defs = doc["$defs"].as_object().unwrap();
        assert_eq!(
            defs.keys().cloned().collect::<BTreeSet<_>>(),
            RECORDS.iter().map(|s| (*s).to_owned()).collect()
        );
        for (name, schema) in defs {
            assert!(
                schema.get("enum").is_some() || schema["additionalProperties"] == false,
                "{name}"
            );
            for r in required(name) {
                assert!(properties(name).contains(&r), "{name}.{r}");
            }
        }
    }

    /// A value with every field set writes exactly the schema's properties;
    /// one with none set writes exactly its required ones.
    #[test]
    fn properties_are_what_the_serializers_write() {
        let full = full_request().to_json_at(0);
        assert_eq!(keys(&full), properties("ApprovalRequest"));
        let mut bare = full_request();
        bare.approval_type = None;
        bare.reason = None;
        bare.decided_by = None;
        bare.decided_at_ms = None;
        bare.decision_reason = None;
        bare.session_id = None;
        assert_eq!(keys(&bare.to_json_at(0)), required("ApprovalRequest"));
        assert_eq!(keys(&full["actor"]), properties("Actor"));

        let frame = Frame {
            surface: Surface::Mcp,
            actor: actor(),
            trace: Some(TraceContext {
                traceparent: "00-x".into(),
                tracestate: Some("s".into()),
            }),
            request_id: Some("r".into()),
            agent_id: Some("a".into()),
            session_id: Some("s".into()),
        };
        let frame_json = serde_json::to_value(&frame).unwrap();
        assert_eq!(keys(&frame_json), properties("Frame"));
        assert_eq!(keys(&frame_json["trace"]), properties("TraceContext"));
        let bare_frame = serde_json::to_value(Frame::new(Surface::Mcp)).unwrap();
        assert_eq!(keys(&bare_frame), required("Frame"));

        let bare_trace = serde_json::to_value(TraceContext {
            traceparent: "00-x".into(),
            tracestate: None,
        })
        .unwrap();
        assert_eq!(keys(&bare_trace), required("TraceContext"));

        let mut policy = PolicyRecord {
            scope: PolicyScope::Capability,
            index: 0,
            name: Some("p".into()),
            mode: PolicyMode::Shadow,
            host: true,
            decision: "requireApproval",
            reason: Some("r".into()),
            approval_type: Some("t".into()),
            failed: false,
        };
        let full_policy = serde_json::to_value(&policy).unwrap();
        assert_eq!(keys(&full_policy), properties("PolicyRecord"));
        (policy.name, policy.reason, policy.approval_type) = (None, None, None);
        let bare_policy = serde_json::to_value(&policy).unwrap();
        assert_eq!(keys(&bare_policy), required("PolicyRecord"));

        let info = serde_json::to_value(RedactionInfo {
            surface: Surface::Mcp,
            capability_id: "c",
            actor: &frame.actor,
        })
        .unwrap();
        assert_eq!(keys(&info), properties("RedactionInfo"));

        let page = crate::ffi::page_json(&[], &crate::approval::ListFilter::default());
        assert_eq!(keys(&page), properties("ApprovalPage"));

        let error = crate::CapabilityError::new(ErrorCode::PolicyDenied, "no")
            .with_details(json!({"policy": 0}))
            .to_json();
        assert_eq!(keys(&error), properties("CapabilityError"));
    }

    #[test]
    fn the_audit_record_is_its_field_list() {
        for e in AuditEvent::ALL {
            assert_eq!(serde_json::to_value(e).unwrap(), e.as_str());
        }
        assert_eq!(
            properties("AuditRecord"),
            AuditRecord::FIELDS
                .iter()
                .map(|s| (*s).to_owned())
                .collect()
        );
        for omitted in AuditRecord::OMITTED_WHEN_ABSENT {
            assert!(!required("AuditRecord").contains(omitted), "{omitted}");
        }
    }
}
