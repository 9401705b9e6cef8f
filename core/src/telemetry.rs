//! What one governed call tells OpenTelemetry (issue 20): the span's name
//! and attributes, after the GenAI semantic conventions for tool execution
//! (`execute_tool <name>`, `gen_ai.operation.name`, `gen_ai.tool.name`,
//! `gen_ai.tool.type`, `gen_ai.tool.call.id`, `error.type`) plus the
//! governance outcome under `orpc_agent.*`, and the attributes of the
//! call counter and duration histogram.
//!
//! Computed once, here, from the call's finished audit record, so every
//! binding reports the same names and values; a binding only hands them to
//! its language's OpenTelemetry API. No payload unless the application
//! opts its spans in (`InvokeOptions::span_payloads`): then the redacted
//! output, as `gen_ai.tool.call.result` (JSON text). The input never: an
//! audit record has none (its hash could be reversed for small domains),
//! and a span says no more than the record. The audit output (with audit
//! payloads) is never a span attribute.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::meta::Surface;
use crate::pipeline::stage::Stage;
use crate::pipeline::{AuditEvent, AuditRecord};

/// The instrumentation scope's name (tracer and meter).
pub const SCOPE_NAME: &str = "orpc-agent";
/// The GenAI operation every governed call is.
pub const OPERATION: &str = "execute_tool";
/// Counter: governed calls, by capability, surface and outcome.
pub const CALLS_METRIC: &str = "orpc_agent.calls";
/// Histogram: a governed call's duration in seconds, by the same attributes.
pub const DURATION_METRIC: &str = "orpc_agent.call.duration";

/// One call's telemetry, as the bindings hand it to OpenTelemetry.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallTelemetry {
    /// `execute_tool <name>`.
    pub span_name: String,
    /// The span's attributes (strings, integers and booleans).
    pub attributes: Map<String, Value>,
    /// The error code when the call ended in an error: the span's status is
    /// ERROR with it as the description (`error.type` carries it too).
    pub error: Option<&'static str>,
    /// The counter's and histogram's attributes: bounded values only (the
    /// capability id, never a stranger's requested name).
    pub metric_attributes: Map<String, Value>,
    /// The duration the histogram records, in seconds.
    pub duration_s: f64,
}

/// The telemetry of the call `record` finished; `None` for a `started`
/// record (a span reports the call once, when it ends).
pub fn call_telemetry(record: &AuditRecord) -> Option<CallTelemetry> {
    if record.event != AuditEvent::Finished {
        return None;
    }
    let outcome = record.outcome.unwrap_or("INTERNAL");
    let error = is_error(outcome).then_some(outcome);
    let tool = tool_name(record);

    let mut a = Map::new();
    let mut put = |k: &str, v: Value| {
        a.insert(k.to_owned(), v);
    };
    put("gen_ai.operation.name", OPERATION.into());
    put("gen_ai.tool.name", tool.into());
    put("gen_ai.tool.type", "function".into());
    if let Some(id) = tool_call_id(record) {
        put("gen_ai.tool.call.id", id.into());
    }
    if let Some(e) = error {
        put("error.type", e.into());
    }
    if let Some(id) = &record.capability_id {
        put("orpc_agent.capability.id", id.as_str().into());
    }
    put("orpc_agent.surface", record.surface.as_str().into());
    put("orpc_agent.outcome", outcome.into());
    put("orpc_agent.stage", record.stage.name().into());
    put("orpc_agent.attempts", record.attempts.into());
    put("orpc_agent.resumed", record.resumed.into());
    if let Some(id) = &record.approval_id {
        put("orpc_agent.approval.id", id.as_str().into());
    }
    if let Some(state) = approval_state(record, outcome) {
        put("orpc_agent.approval.state", state.into());
    }
    if let Some(p) = deciding_policy(record) {
        put("orpc_agent.policy.decision", p.decision.into());
        if let Some(name) = &p.name {
            put("orpc_agent.policy.name", name.as_str().into());
        }
        if p.failed {
            put("orpc_agent.policy.failed", true.into());
        }
    }
    if let Some(id) = &record.request_id {
        put("orpc_agent.request.id", id.as_str().into());
    }
    // Only when the application opted its spans in, and then only the
    // redacted output (the record's `span_output`); never the input. In
    // the text a model is sent (`mcp::model_text`), so a Python span reads
    // as Node's (`10`, not `10.0`; `0`, not `-0.0`).
    if let Some(output) = &record.span_output {
        put(
            "gen_ai.tool.call.result",
            crate::mcp::model_text(output).into(),
        );
    }

    let mut m = Map::new();
    m.insert("gen_ai.operation.name".into(), OPERATION.into());
    if let Some(id) = &record.capability_id {
        m.insert("orpc_agent.capability.id".into(), id.as_str().into());
    }
    m.insert("orpc_agent.surface".into(), record.surface.as_str().into());
    m.insert("orpc_agent.outcome".into(), outcome.into());
    if let Some(e) = error {
        m.insert("error.type".into(), e.into());
    }

    Some(CallTelemetry {
        span_name: format!("{OPERATION} {tool}"),
        attributes: a,
        error,
        metric_attributes: m,
        duration_s: record.duration_ms as f64 / 1000.0,
    })
}

/// The longest tool name a span reports: MCP's limit on a tool name.
pub const MAX_TOOL_NAME: usize = 128;

/// The name the caller asked for: one of the capability's own names when
/// it resolved (bounded by the registry); a name that resolved to nothing
/// is a stranger's text, cut to [`MAX_TOOL_NAME`] bytes.
fn tool_name(record: &AuditRecord) -> &str {
    let asked = record.requested.as_deref();
    match (asked, record.capability_id.as_deref()) {
        (Some(asked), Some(_)) => asked,
        (None, Some(id)) => id,
        (Some(asked), None) => {
            let mut end = asked.len().min(MAX_TOOL_NAME);
            while !asked.is_char_boundary(end) {
                end -= 1;
            }
            &asked[..end]
        }
        (None, None) => "unknown",
    }
}

/// The parent a call's span continues: the frame's W3C trace context as
/// the core keeps it (stage 3's rules: an invalid `traceparent` is no
/// parent at all, an invalid `tracestate` is dropped), in its fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpanParent {
    pub trace_id: String,
    pub span_id: String,
    /// The trace flags (bit 0: sampled).
    pub trace_flags: u8,
    pub tracestate: Option<String>,
}

/// The span parent the frame's `traceparent` / `tracestate` name, if valid.
pub fn span_parent(traceparent: &str, tracestate: Option<&str>) -> Option<SpanParent> {
    let kept = crate::pipeline::trace::freeze_trace(Some(crate::frame::TraceContext {
        traceparent: traceparent.to_owned(),
        tracestate: tracestate.map(str::to_owned),
    }))?;
    let mut parts = kept.traceparent.split('-');
    let (_version, trace_id, span_id, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    Some(SpanParent {
        trace_id: trace_id.to_owned(),
        span_id: span_id.to_owned(),
        trace_flags: u8::from_str_radix(flags, 16).ok()?,
        tracestate: kept.tracestate,
    })
}

/// The trace context a call's audit record carries when its span is the
/// OpenTelemetry span with these ids: the span's own `traceparent`, and as
/// `tracestate` the one the core kept from the frame's trace when the span
/// continues it (same trace id: the libraries' own parses drop members the
/// core keeps), else the span's as its library wrote it (stage 3 applies
/// the core's rules to it). One rule for every binding.
pub fn recorded_trace(
    frame: Option<&crate::frame::TraceContext>,
    trace_id: &str,
    span_id: &str,
    trace_flags: u8,
    span_tracestate: Option<&str>,
) -> crate::frame::TraceContext {
    let parent = frame.and_then(|t| span_parent(&t.traceparent, t.tracestate.as_deref()));
    let tracestate = match parent {
        Some(p) if p.trace_id == trace_id => p.tracestate,
        _ => span_tracestate.map(str::to_owned),
    };
    crate::frame::TraceContext {
        traceparent: format!("00-{trace_id}-{span_id}-{trace_flags:02x}"),
        tracestate: tracestate.filter(|s| !s.is_empty()),
    }
}

/// `ok` and `approval_required` are outcomes; anything else is an error code.
fn is_error(outcome: &str) -> bool {
    !matches!(outcome, "ok" | "approval_required")
}

/// The model's tool call id, where a call carries one: on the AI SDK
/// surface the adapters (AI SDK, OpenAI Agents, PydanticAI) put it in the
/// frame's request id when the application gives none.
fn tool_call_id(record: &AuditRecord) -> Option<&str> {
    match record.surface {
        Surface::AiSdk => record.request_id.as_deref(),
        _ => None,
    }
}

/// Where the call's approval stands: `pending` (a request was made or
/// found), `consumed` (a resume got past the grant check: the request is
/// used up), `refused` (a resume the grant check refused).
fn approval_state(record: &AuditRecord, outcome: &str) -> Option<&'static str> {
    if outcome == "approval_required" {
        return Some("pending");
    }
    if !record.resumed {
        return None;
    }
    Some(if record.stage > Stage::GrantCheck {
        "consumed"
    } else {
        "refused"
    })
}

/// The policy whose decision stood: the first enforced deny, else the
/// first enforced requireApproval, else the first enforced allow (shadow
/// policies decide nothing).
fn deciding_policy(record: &AuditRecord) -> Option<&crate::pipeline::audit::PolicyRecord> {
    let enforced = || {
        record
            .policies
            .iter()
            .filter(|p| p.mode != crate::policy::PolicyMode::Shadow)
    };
    ["deny", "requireApproval", "allow"]
        .into_iter()
        .find_map(|d| enforced().find(|p| p.decision == d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_tracestate_is_the_kept_parents_when_the_span_continues_it() {
        let frame = crate::frame::TraceContext {
            traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into(),
            tracestate: Some("a=1,1special=2".into()),
        };
        let child = recorded_trace(
            Some(&frame),
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "1111111111111111",
            1,
            Some("a=1"), // a library's re-parse
        );
        assert_eq!(
            child.traceparent,
            "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"
        );
        assert_eq!(child.tracestate.as_deref(), Some("a=1,1special=2"));
        // Another trace (the active context's): the span's own state.
        let other = recorded_trace(
            Some(&frame),
            "0af7651916cd43dd8448eb211c80319c",
            "2222222222222222",
            0,
            Some("b=2"),
        );
        assert_eq!(other.tracestate.as_deref(), Some("b=2"));
        assert_eq!(
            other.traceparent,
            "00-0af7651916cd43dd8448eb211c80319c-2222222222222222-00"
        );
        assert_eq!(
            recorded_trace(
                None,
                "0af7651916cd43dd8448eb211c80319c",
                "2222222222222222",
                1,
                Some("")
            )
            .tracestate,
            None
        );
    }
    use crate::pipeline::audit::PolicyRecord;
    use crate::pipeline::policies::PolicyScope;
    use crate::policy::PolicyMode;

    fn record(outcome: &'static str) -> AuditRecord {
        AuditRecord {
            event: AuditEvent::Finished,
            capability_id: Some("orders.refund".into()),
            requested: Some("orders_refund".into()),
            surface: Surface::AiSdk,
            actor_id: Some("ann".into()),
            resumed: false,
            policies: vec![],
            approval_id: None,
            attempts: 1,
            started_at: 1_000,
            duration_ms: 1_500,
            outcome: Some(outcome),
            stage: Stage::Finished,
            traceparent: None,
            tracestate: None,
            request_id: Some("call_1".into()),
            agent_id: None,
            session_id: None,
            failure: None,
            output: Some(serde_json::json!({"secret": 1})),
            span_output: None,
        }
    }

    fn policy(decision: &'static str, mode: PolicyMode, name: &str) -> PolicyRecord {
        PolicyRecord {
            scope: PolicyScope::Capability,
            index: 0,
            name: Some(name.into()),
            mode,
            host: false,
            decision,
            reason: None,
            approval_type: None,
            failed: false,
        }
    }

    #[test]
    fn an_ok_call_is_an_execute_tool_span_with_no_payload() {
        let t = call_telemetry(&record("ok")).unwrap();
        assert_eq!(t.span_name, "execute_tool orders_refund");
        assert_eq!(t.error, None);
        assert_eq!(t.attributes["gen_ai.tool.call.id"], "call_1");
        assert_eq!(t.attributes["orpc_agent.outcome"], "ok");
        assert!(!t.attributes.contains_key("error.type"));
        assert!(!serde_json::to_string(&t).unwrap().contains("secret"));
        assert_eq!(t.duration_s, 1.5);
        assert!(!t.metric_attributes.contains_key("gen_ai.tool.name"));
    }

    #[test]
    fn the_deciding_policy_is_the_first_enforced_deny() {
        let mut r = record("POLICY_DENIED");
        r.policies = vec![
            policy("allow", PolicyMode::Enforce, "open"),
            policy("deny", PolicyMode::Shadow, "would-deny"),
            policy("deny", PolicyMode::Enforce, "tenant"),
        ];
        let t = call_telemetry(&r).unwrap();
        assert_eq!(t.error, Some("POLICY_DENIED"));
        assert_eq!(t.attributes["error.type"], "POLICY_DENIED");
        assert_eq!(t.attributes["orpc_agent.policy.decision"], "deny");
        assert_eq!(t.attributes["orpc_agent.policy.name"], "tenant");
    }

    #[test]
    fn approval_states() {
        let mut r = record("approval_required");
        r.approval_id = Some("apr_1".into());
        let t = call_telemetry(&r).unwrap();
        assert_eq!(t.attributes["orpc_agent.approval.state"], "pending");
        assert_eq!(t.error, None);
        r.resumed = true;
        r.outcome = Some("ok");
        assert_eq!(
            call_telemetry(&r).unwrap().attributes["orpc_agent.approval.state"],
            "consumed"
        );
        r.outcome = Some("APPROVAL_EXPIRED");
        r.stage = Stage::GrantCheck;
        assert_eq!(
            call_telemetry(&r).unwrap().attributes["orpc_agent.approval.state"],
            "refused"
        );
    }

    #[test]
    fn the_span_parent_follows_the_core_s_trace_rules() {
        let p = span_parent(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            Some("a=1"),
        )
        .unwrap();
        assert_eq!(p.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(p.span_id, "00f067aa0ba902b7");
        assert_eq!(p.trace_flags, 1);
        assert_eq!(p.tracestate.as_deref(), Some("a=1"));
        assert_eq!(span_parent("00-zz-00f067aa0ba902b7-01", None), None);
        assert_eq!(
            span_parent(
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                None
            ),
            None
        );
    }

    #[test]
    fn a_span_carries_the_redacted_output_only_when_opted_in() {
        let mut r = record("ok");
        assert!(
            !call_telemetry(&r)
                .unwrap()
                .attributes
                .contains_key("gen_ai.tool.call.result")
        );
        r.span_output = Some(serde_json::json!({"card": "****"}));
        let t = call_telemetry(&r).unwrap();
        assert_eq!(
            t.attributes["gen_ai.tool.call.result"],
            r#"{"card":"****"}"#
        );
        assert!(
            !serde_json::to_string(&t).unwrap().contains("secret"),
            "never the audit output"
        );
        // Floats as a model reads them from every binding: Python's 10.0
        // and -0.0 are Node's 10 and 0.
        r.span_output = Some(serde_json::json!({"amount": 10.0, "neg": -0.0, "big": 1e21}));
        assert_eq!(
            call_telemetry(&r).unwrap().attributes["gen_ai.tool.call.result"],
            r#"{"amount":10,"neg":0,"big":1e+21}"#
        );
    }

    #[test]
    fn a_stranger_s_tool_name_is_cut() {
        let mut r = record("NOT_FOUND");
        r.capability_id = None;
        r.requested = Some("é".repeat(200));
        let t = call_telemetry(&r).unwrap();
        let name = t.attributes["gen_ai.tool.name"].as_str().unwrap();
        assert_eq!(name.len(), MAX_TOOL_NAME);
        assert_eq!(t.span_name, format!("execute_tool {name}"));
    }

    #[test]
    fn a_started_record_has_no_telemetry() {
        let mut r = record("ok");
        r.event = AuditEvent::Started;
        assert_eq!(call_telemetry(&r), None);
    }
}
