//! Audit records and the policy decisions they list, from the core's
//! `AuditRecord` and `PolicyRecord`.

use orpc_agent_core::pipeline::audit::{AuditRecord, PolicyRecord};
use serde_json::Value;

use super::{FfiAuditRecord, FfiPolicyRecord, FfiTrace};

impl From<&PolicyRecord> for FfiPolicyRecord {
    fn from(p: &PolicyRecord) -> FfiPolicyRecord {
        let PolicyRecord {
            scope,
            index,
            name,
            mode,
            host,
            decision,
            reason,
            approval_type,
            failed,
        } = p;
        FfiPolicyRecord {
            scope: scope.as_str().to_owned(),
            index: *index,
            name: name.clone(),
            mode: mode.as_str().to_owned(),
            host: *host,
            decision: (*decision).to_owned(),
            reason: reason.clone(),
            approval_type: approval_type.clone(),
            failed: *failed,
        }
    }
}

impl From<&AuditRecord> for FfiAuditRecord {
    fn from(r: &AuditRecord) -> FfiAuditRecord {
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
            span_output: _, // the span's, never an audit record's
        } = r;
        FfiAuditRecord {
            event: event.as_str().to_owned(),
            capability_id: capability_id.clone(),
            requested: requested.clone(),
            surface: (*surface).into(),
            actor_id: actor_id.clone(),
            resumed: *resumed,
            policies: policies.iter().map(Into::into).collect(),
            approval_id: approval_id.clone(),
            attempts: *attempts,
            started_at_ms: *started_at,
            duration_ms: *duration_ms,
            outcome: outcome.map(str::to_owned),
            stage: stage.number(),
            trace: traceparent.as_ref().map(|traceparent| FfiTrace {
                traceparent: traceparent.clone(),
                tracestate: tracestate.clone(),
            }),
            request_id: request_id.clone(),
            agent_id: agent_id.clone(),
            session_id: session_id.clone(),
            failure: failure.clone(),
            output_json: output.as_ref().map(Value::to_string),
            json: r.to_json().to_string(),
        }
    }
}
