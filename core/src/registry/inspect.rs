//! `inspect()`: per capability its resolved values, surfaces, tool names and
//! warnings — what a reviewer reads before a rollout.

use serde_json::{Value, json};

use super::{Capability, CapabilityDecl, RegistryOptions, analyse};
use crate::meta::{Problem, Warning, WarningCode, limits, mcp_annotations};

/// One capability's line in the report.
#[derive(Clone, Debug, PartialEq)]
pub struct CapabilityReport {
    pub id: String,
    /// Resolved values, defaults applied, as JSON (camelCase).
    pub resolved: Value,
    pub surfaces: Vec<&'static str>,
    pub ai_sdk_tool_name: String,
    pub mcp_tool_name: String,
    pub warnings: Vec<Warning>,
}

/// The whole report. `problems` is empty for a registry that built.
#[derive(Clone, Debug, PartialEq)]
pub struct InspectReport {
    pub capabilities: Vec<CapabilityReport>,
    pub problems: Vec<Problem>,
}

impl InspectReport {
    pub fn to_json(&self) -> Value {
        json!({
            "valid": self.problems.is_empty(),
            "capabilities": self.capabilities.iter().map(|c| json!({
                "id": c.id,
                "surfaces": c.surfaces,
                "toolNames": {"aiSdk": c.ai_sdk_tool_name, "mcp": c.mcp_tool_name},
                "resolved": c.resolved,
                "warnings": c.warnings.iter().map(Warning::to_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "problems": self.problems.iter().map(Problem::to_json).collect::<Vec<_>>(),
        })
    }

    pub fn warning_count(&self) -> usize {
        self.capabilities.iter().map(|c| c.warnings.len()).sum()
    }
}

/// Reports on declarations whether or not they build: the capabilities that
/// parsed, with warnings, and every problem.
pub fn inspect_declarations(decls: Vec<CapabilityDecl>, options: RegistryOptions) -> InspectReport {
    let a = analyse(decls, options);
    report(&a.capabilities, &a.options, a.problems)
}

pub(crate) fn report(
    caps: &[Capability],
    options: &RegistryOptions,
    problems: Vec<Problem>,
) -> InspectReport {
    InspectReport {
        capabilities: caps.iter().map(|c| capability_report(c, options)).collect(),
        problems,
    }
}

fn capability_report(c: &Capability, options: &RegistryOptions) -> CapabilityReport {
    let m = &c.meta;
    let approval = m.approval.clone().unwrap_or_default();
    let resolved = json!({
        "description": m.description,
        "sideEffect": m.side_effect,
        "risk": m.risk,
        "tags": m.tags,
        "timeoutMs": c.timeout_ms,
        "idempotent": m.idempotent.unwrap_or(false),
        "retry": m.retry.as_ref().map(|r| json!({
            "maxAttempts": r.max_attempts,
            "backoffMs": c.backoff_ms,
            "retryOn": r.retry_on,
            "eligible": c.retry_eligible,
        })),
        "approval": {
            "required": approval.required,
            "type": approval.kind,
            "expiresInMs": c.approval_expires_in_ms,
        },
        "redact": {"output": m.redact.output, "approvalInput": m.redact.approval_input},
        "policies": m.policies.iter().map(|p| json!({
            "name": p.name,
            "mode": p.mode,
            "host": matches!(p.rule, crate::policy::PolicyRule::Host),
        })).collect::<Vec<_>>(),
        "discovery": m.discovery,
        "mcpAnnotations": mcp_annotations(m),
    });
    CapabilityReport {
        id: c.id.clone(),
        resolved,
        surfaces: m.expose.surfaces().map(|s| s.as_str()).collect(),
        ai_sdk_tool_name: c.ai_sdk_tool_name.clone(),
        mcp_tool_name: c.mcp_tool_name.clone(),
        warnings: warnings(c, options),
    }
}

fn warnings(c: &Capability, options: &RegistryOptions) -> Vec<Warning> {
    let m = &c.meta;
    let mut out = Vec::new();
    let mut warn = |path: &str, code, message: String| {
        out.push(Warning {
            path: path.to_owned(),
            code,
            message,
        })
    };
    if m.expose.is_empty() {
        warn(
            "expose",
            WarningCode::ExposeEmpty,
            "exposed on no surface: defined, reachable nowhere".into(),
        );
    }
    let len = m.description.chars().count();
    if len > limits::DESCRIPTION_WARN_CHARS {
        warn(
            "description",
            WarningCode::DescriptionTooLong,
            format!(
                "description is {len} characters; keep it under {} (it is prompt space)",
                limits::DESCRIPTION_WARN_CHARS
            ),
        );
    }
    let gated = m.approval.as_ref().is_some_and(|a| a.required);
    let guarded = m
        .policies
        .iter()
        .chain(&options.policies)
        .any(|p| p.may_guard(&m.tags, m.risk, m.side_effect));
    if !m.side_effect.is_read_only() && !gated && !guarded {
        warn(
            "sideEffect",
            WarningCode::UnguardedSideEffect,
            format!(
                "a `{}` capability with neither an approval gate nor a policy that applies to it",
                m.side_effect.as_str()
            ),
        );
    }
    if let Some(r) = &m.retry
        && !c.retry_eligible
    {
        let why = if r.max_attempts == 0 {
            "maxAttempts is 0".to_owned()
        } else {
            format!(
                "a `{}` capability is retried only with `idempotent: true`",
                m.side_effect.as_str()
            )
        };
        warn(
            "retry",
            WarningCode::RetryIneligible,
            format!("retry is declared but the runtime will never retry: {why}"),
        );
    }
    for (hint, contradicts) in [
        ("readOnlyHint", Value::Bool(true)),
        ("destructiveHint", Value::Bool(false)),
        ("idempotentHint", Value::Bool(true)),
        ("openWorldHint", Value::Bool(false)),
    ] {
        let Some(v) = m.adapters.mcp_annotations.get(hint) else {
            continue;
        };
        let bad = *v == contradicts
            && match hint {
                "readOnlyHint" => !m.side_effect.is_read_only(),
                "destructiveHint" => m.side_effect == crate::meta::SideEffect::Destructive,
                "idempotentHint" => !m.side_effect.is_read_only() && m.idempotent != Some(true),
                _ => m.side_effect == crate::meta::SideEffect::External,
            };
        if bad {
            warn(
                &format!("adapters.mcp.annotations.{hint}"),
                WarningCode::AnnotationContradicts,
                format!(
                    "`{hint}: {v}` contradicts sideEffect `{}`; clients will be told the wrong thing",
                    m.side_effect.as_str()
                ),
            );
        }
    }
    out
}
