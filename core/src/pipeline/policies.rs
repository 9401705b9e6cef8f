//! Stages 5–6: policy evaluation rules (SI-5, SI-6).
//!
//! Runtime-level policies run first, then capability-scoped ones, each list
//! in order. For every policy:
//!
//! * a declarative one is evaluated here, natively, against the frozen frame
//!   and the validated input; a host one is asked for with
//!   [`super::Step::EvaluatePolicy`];
//! * a host policy that throws or times out counts as `deny` (fail closed);
//! * a `shadow` policy's decision is recorded in the audit record and
//!   otherwise ignored;
//! * an enforced `deny` stops evaluation at once: the call fails with
//!   POLICY_DENIED and the policy's reason;
//! * an enforced `requireApproval` is remembered (the first one gives the
//!   request's type, reason and expiry) and evaluation continues, so a later
//!   deny still wins;
//! * `allow` and `abstain` change nothing: an allow never overrides a later
//!   deny or the static `approval.required`.

use serde::Serialize;
use serde_json::{Value, json};

use super::step::Decision;
use crate::error::{CapabilityError, ErrorCode};
use crate::policy::{
    CedarCall, CedarDecisionKind, DecisionKind, MatchContext, PolicyRule, PolicySpec,
};

/// Which list a policy belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
#[repr(u8)]
pub enum PolicyScope {
    /// The registry's runtime `policies` (stage 5).
    Runtime = 0,
    /// The capability's own `policies` (stage 6).
    Capability = 1,
}

impl PolicyScope {
    pub const fn as_str(self) -> &'static str {
        match self {
            PolicyScope::Runtime => "runtime",
            PolicyScope::Capability => "capability",
        }
    }
}

/// Whether evaluating `spec` natively needs the input as JSON.
pub(crate) fn needs_input(spec: &PolicySpec) -> bool {
    match &spec.rule {
        PolicyRule::Match { when, .. } => !when.input.is_empty(),
        PolicyRule::Cedar(_) => true,
        PolicyRule::Host => false,
    }
}

/// A Cedar policy set's decision for this call, and whether it failed
/// (an evaluation error: deny, audited as failed). `None` for any other
/// kind of policy.
pub(crate) fn evaluate_cedar(spec: &PolicySpec, call: &CedarCall) -> Option<(Decision, bool)> {
    let PolicyRule::Cedar(rule) = &spec.rule else {
        return None;
    };
    Some(match rule.evaluate(call).kind {
        CedarDecisionKind::Allow => (Decision::Allow, false),
        CedarDecisionKind::Deny { reason } => (Decision::Deny { reason }, false),
        CedarDecisionKind::RequireApproval {
            approval_type,
            reason,
        } => (
            Decision::RequireApproval {
                approval_type,
                reason,
                expires_in_ms: None,
            },
            false,
        ),
        CedarDecisionKind::Abstain => (Decision::Abstain, false),
        CedarDecisionKind::Failed => (Decision::Deny { reason: None }, true),
    })
}

/// A declarative policy's decision for this call: its `decision` when
/// `when` matches, else abstain. `None` for a host policy.
pub(crate) fn evaluate_declarative(spec: &PolicySpec, cx: &MatchContext) -> Option<Decision> {
    let PolicyRule::Match {
        when,
        decision,
        reason,
        approval_type,
        expires_in_ms,
    } = &spec.rule
    else {
        return None;
    };
    if !when.matches(cx) {
        return Some(Decision::Abstain);
    }
    Some(match decision {
        DecisionKind::Allow => Decision::Allow,
        DecisionKind::Deny => Decision::Deny {
            reason: reason.clone(),
        },
        DecisionKind::RequireApproval => Decision::RequireApproval {
            approval_type: approval_type.clone(),
            reason: reason.clone(),
            expires_in_ms: *expires_in_ms,
        },
    })
}

fn policy_details(name: Option<&str>, scope: PolicyScope, index: u32) -> Value {
    json!({"policy": name, "scope": scope.as_str(), "index": index})
}

/// POLICY_DENIED for an enforced deny. The message is for a model: it says
/// the call was refused by policy, gives the policy's reason, and that
/// repeating the same call will not help.
pub(crate) fn denied(
    name: Option<&str>,
    reason: Option<&str>,
    scope: PolicyScope,
    index: u32,
) -> CapabilityError {
    let who = match name {
        Some(n) => format!("policy \"{n}\""),
        None => "policy".to_owned(),
    };
    let message = match reason {
        Some(r) if !r.is_empty() => format!("Denied by {who}: {r}"),
        _ => format!("Denied by {who}. Do not repeat this call unchanged."),
    };
    CapabilityError::new(ErrorCode::PolicyDenied, message)
        .with_details(policy_details(name, scope, index))
}

/// POLICY_DENIED for a host policy that threw or timed out (fail closed).
/// The host's error message stays out: it may quote the input.
pub(crate) fn failed(name: Option<&str>, scope: PolicyScope, index: u32) -> CapabilityError {
    let who = match name {
        Some(n) => format!("policy \"{n}\""),
        None => "a policy".to_owned(),
    };
    CapabilityError::new(
        ErrorCode::PolicyDenied,
        format!("Denied: {who} could not be evaluated, so the call is refused."),
    )
    .with_details(policy_details(name, scope, index))
}
