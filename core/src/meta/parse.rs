//! JSON → `AgentMeta`, recording every problem (never first-problem-only).

use serde_json::Value;

use super::problem::{ProblemCode, Problems};
use super::read::{ObjReader, enum_value, string_list, type_name};
use super::{
    Adapters, AgentMeta, ApprovalConfig, Defaults, Discovery, Exposure, RedactHooks, RetryConfig,
    Risk, SideEffect, Surface, limits,
};
use crate::policy::parse_policy_list;

/// Reads one capability's metadata. Returns `None` when a problem was
/// recorded; the caller still has the full list in `p`.
pub(crate) fn read_agent_meta(v: &Value, p: &mut Problems) -> Option<AgentMeta> {
    let before = p.list.len();
    let mut r = ObjReader::new(v, "", p)?;

    let description = r.str_req("description", p).map(str::to_owned);
    let expose = r
        .required_value("expose", p)
        .and_then(|v| read_expose(v, p));
    let side_effect = read_enum(
        &mut r,
        "sideEffect",
        p,
        SideEffect::parse,
        SideEffect::expected,
    );
    let risk = read_enum(&mut r, "risk", p, Risk::parse, Risk::expected);
    let tags = r
        .get("tags")
        .and_then(|v| string_list(v, "tags", p))
        .unwrap_or_default();
    let timeout_ms = r.positive_opt("timeoutMs", limits::MAX_TIMEOUT_MS, p);
    let retry = r.get("retry").and_then(|v| read_retry(v, p));
    let idempotent = r.bool_opt("idempotent", p);
    let approval = r.get("approval").and_then(|v| read_approval(v, p));
    let redact = r
        .get("redact")
        .and_then(|v| read_redact(v, p))
        .unwrap_or_default();
    let policies = r
        .get("policies")
        .map(|v| parse_policy_list(v, "policies", p))
        .unwrap_or_default();
    let adapters = r
        .get("adapters")
        .and_then(|v| read_adapters(v, p))
        .unwrap_or_default();
    let discovery = match r.get("discovery") {
        None => Some(Discovery::Discoverable),
        Some(v) => enum_value(v, "discovery", p, Discovery::parse, Discovery::expected),
    };
    r.finish(p);

    // Cross-field rule: retry on a side effect that changes the world needs
    // an explicit `idempotent: true` (spec/000, SI-11).
    if let (Some(se), Some(retry)) = (side_effect, &retry)
        && !se.is_read_only()
        && idempotent != Some(true)
        && retry.max_attempts > 0
    {
        p.push(
            "retry",
            ProblemCode::RetryNotIdempotent,
            format!(
                "retry on a `{}` capability requires `idempotent: true`",
                se.as_str()
            ),
        );
    }

    if p.list.len() != before {
        return None;
    }
    Some(AgentMeta {
        description: description?,
        expose: expose?,
        side_effect: side_effect?,
        risk: risk?,
        tags,
        timeout_ms,
        retry,
        idempotent,
        approval,
        redact,
        policies,
        adapters,
        discovery: discovery?,
    })
}

/// Parses one capability's metadata from JSON; `Err` holds every problem,
/// each attributed to `capability_id`.
pub fn parse_agent_meta(capability_id: &str, v: &Value) -> Result<AgentMeta, Vec<super::Problem>> {
    let mut list = Vec::new();
    let mut p = Problems {
        capability: Some(capability_id),
        list: &mut list,
    };
    match read_agent_meta(v, &mut p) {
        Some(m) if list.is_empty() => Ok(m),
        _ => Err(list),
    }
}

fn read_enum<T>(
    r: &mut ObjReader,
    key: &'static str,
    p: &mut Problems,
    parse: fn(&str) -> Option<T>,
    expected: fn() -> String,
) -> Option<T> {
    let v = r.required_value(key, p)?;
    enum_value(v, key, p, parse, expected)
}

fn read_expose(v: &Value, p: &mut Problems) -> Option<Exposure> {
    let Value::Object(obj) = v else {
        p.push(
            "expose",
            ProblemCode::WrongType,
            format!(
                "expected an object of surface → boolean, got {}",
                type_name(v)
            ),
        );
        return None;
    };
    let mut exposure = Exposure::NONE;
    let mut ok = true;
    for (key, val) in obj {
        let path = format!("expose.{key}");
        let Some(surface) = Surface::parse(key) else {
            p.push(
                path,
                ProblemCode::UnknownSurface,
                format!(
                    "unknown surface `{key}`; expected one of direct, aiSdk, mcp, workflow, test"
                ),
            );
            ok = false;
            continue;
        };
        match val {
            // SI-1: only a literal `true` exposes.
            Value::Bool(true) => exposure = exposure.with(surface),
            Value::Bool(false) => {}
            other => {
                p.push(
                    path,
                    ProblemCode::WrongType,
                    format!("expected a boolean, got {}", type_name(other)),
                );
                ok = false;
            }
        }
    }
    ok.then_some(exposure)
}

fn read_retry(v: &Value, p: &mut Problems) -> Option<RetryConfig> {
    let mut r = ObjReader::new(v, "retry", p)?;
    let max_attempts = match r.get("maxAttempts") {
        None => {
            p.push(
                "retry.maxAttempts",
                ProblemCode::MissingField,
                "maxAttempts is required",
            );
            None
        }
        Some(v) => {
            super::read::integer_in(v, "retry.maxAttempts", 0, limits::MAX_RETRY_ATTEMPTS, p)
        }
    };
    let backoff_ms = r.int_opt("backoffMs", 0, limits::MAX_BACKOFF_MS, p);
    let retry_on = r.bool_opt("retryOn", p).unwrap_or(false);
    r.finish(p);
    Some(RetryConfig {
        max_attempts: u32::try_from(max_attempts?).ok()?,
        backoff_ms,
        retry_on,
    })
}

fn read_approval(v: &Value, p: &mut Problems) -> Option<ApprovalConfig> {
    let mut r = ObjReader::new(v, "approval", p)?;
    let required = r.bool_opt("required", p).unwrap_or(false);
    let kind = r.str_opt("type", p).map(str::to_owned);
    let expires_in_ms = r.positive_opt("expiresInMs", limits::MAX_EXPIRES_IN_MS, p);
    r.finish(p);
    Some(ApprovalConfig {
        required,
        kind,
        expires_in_ms,
    })
}

fn read_redact(v: &Value, p: &mut Problems) -> Option<RedactHooks> {
    let mut r = ObjReader::new(v, "redact", p)?;
    let output = r.bool_opt("output", p).unwrap_or(false);
    let approval_input = r.bool_opt("approvalInput", p).unwrap_or(false);
    r.finish(p);
    Some(RedactHooks {
        output,
        approval_input,
    })
}

fn read_adapters(v: &Value, p: &mut Problems) -> Option<Adapters> {
    let mut r = ObjReader::new(v, "adapters", p)?;
    let mut out = Adapters::default();
    if let Some(ai) = r.get("aiSdk")
        && let Some(mut a) = ObjReader::new(ai, "adapters.aiSdk", p)
    {
        out.ai_sdk_tool_name = a.str_opt("toolName", p).map(str::to_owned);
        a.finish(p);
    }
    if let Some(mcp) = r.get("mcp")
        && let Some(mut m) = ObjReader::new(mcp, "adapters.mcp", p)
    {
        out.mcp_tool_name = m.str_opt("toolName", p).map(str::to_owned);
        match m.get("annotations") {
            None => {}
            Some(Value::Object(map)) => out.mcp_annotations = map.clone(),
            Some(other) => p.push(
                "adapters.mcp.annotations",
                ProblemCode::WrongType,
                format!("expected an object, got {}", type_name(other)),
            ),
        }
        m.finish(p);
    }
    r.finish(p);
    Some(out)
}

/// Reads the `defaults` option (`timeoutMs`, `backoffMs`,
/// `approvalExpiresInMs`), reporting problems under `defaults.*`.
pub(crate) fn read_defaults(v: &Value, p: &mut Problems) -> Defaults {
    let mut d = Defaults::default();
    let Some(mut r) = ObjReader::new(v, "defaults", p) else {
        return d;
    };
    if let Some(t) = r.positive_opt("timeoutMs", limits::MAX_TIMEOUT_MS, p) {
        d.timeout_ms = t;
    }
    if let Some(b) = r.int_opt("backoffMs", 0, limits::MAX_BACKOFF_MS, p) {
        d.backoff_ms = b;
    }
    if let Some(e) = r.positive_opt("approvalExpiresInMs", limits::MAX_EXPIRES_IN_MS, p) {
        d.approval_expires_in_ms = e;
    }
    r.finish(p);
    d
}

/// Parses the `defaults` option on its own.
pub fn parse_defaults(v: &Value) -> Result<Defaults, Vec<super::Problem>> {
    let mut list = Vec::new();
    let d = read_defaults(
        v,
        &mut Problems {
            capability: None,
            list: &mut list,
        },
    );
    if list.is_empty() { Ok(d) } else { Err(list) }
}
