//! Policies: declarative matchers the core evaluates natively, and host
//! policies (callbacks a binding holds) that the pipeline asks the host to
//! evaluate.
//!
//! Wire form of one policy (in `AgentMeta.policies` or the registry's
//! runtime `policies` option):
//!
//! ```json
//! {"name": "big-refunds", "mode": "enforce",
//!  "when": {"tags": ["billing"], "sideEffect": ["write"], "input": ["/amount > 1000"]},
//!  "decision": "requireApproval", "reason": "Refunds over 1000 need a manager",
//!  "approvalType": "manager", "expiresInMs": 3600000}
//! {"name": "tenant-check", "host": true}
//! {"name": "roles", "cedar": "permit (principal, action, resource) when { … };"}
//! ```
//!
//! Every `when` field is optional; all present fields must match (each list
//! is any-of). A policy whose `when` does not match abstains.

pub mod cedar;
mod cedar_schema;
mod cedar_value;
mod predicate;

pub use cedar::{CedarCall, CedarDecision, CedarDecisionKind, CedarProblem, CedarRule};
pub(crate) use cedar_schema::checked_input_type as cedar_checked_input_type;
pub use cedar_schema::input_type as cedar_input_read_type;
pub use predicate::{Op, Predicate};

use serde_json::Value;

use crate::vocab::problem::{ProblemCode, Problems};
use crate::vocab::read::{ObjReader, string_list, type_name};
use crate::vocab::{Risk, SideEffect, Surface, limits, wire_enum};

wire_enum! {
    /// `enforce` (default) or `shadow`: a shadow policy's decision is
    /// recorded in the audit record and not enforced.
    PolicyMode {
        Enforce => "enforce",
        Shadow => "shadow",
    }
}

wire_enum! {
    /// The decision a declarative policy makes when its `when` matches.
    DecisionKind {
        Allow => "allow",
        Deny => "deny",
        RequireApproval => "requireApproval",
    }
}

/// One policy, as declared.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySpec {
    pub name: Option<String>,
    pub mode: PolicyMode,
    pub rule: PolicyRule,
}

// Policies are built once per registry; the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum PolicyRule {
    /// A host callback; the binding holds it.
    Host,
    /// A Cedar policy set, evaluated by the core ([`cedar`]).
    Cedar(CedarRule),
    /// Evaluated by the core.
    Match {
        when: Matcher,
        decision: DecisionKind,
        reason: Option<String>,
        approval_type: Option<String>,
        expires_in_ms: Option<u64>,
    },
}

/// The `when` clause. Empty lists mean "any".
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Matcher {
    pub tags: Vec<String>,
    pub risk: Vec<Risk>,
    pub side_effect: Vec<SideEffect>,
    pub surface: Vec<Surface>,
    pub actor_role: Vec<String>,
    pub input: Vec<Predicate>,
}

/// What a matcher is asked about. Everything here comes from the frozen
/// frame and the validated input (SI-5).
pub struct MatchContext<'a> {
    pub tags: &'a [String],
    pub risk: Risk,
    pub side_effect: SideEffect,
    pub surface: Surface,
    pub actor_roles: &'a [String],
    pub input: &'a Value,
}

impl Matcher {
    /// Does this clause match the call?
    pub fn matches(&self, cx: &MatchContext) -> bool {
        (self.tags.is_empty() || self.tags.iter().any(|t| cx.tags.contains(t)))
            && (self.risk.is_empty() || self.risk.contains(&cx.risk))
            && (self.side_effect.is_empty() || self.side_effect.contains(&cx.side_effect))
            && (self.surface.is_empty() || self.surface.contains(&cx.surface))
            && (self.actor_role.is_empty()
                || self.actor_role.iter().any(|r| cx.actor_roles.contains(r)))
            && self.input.iter().all(|pr| pr.eval(cx.input))
    }

    /// Could this clause match some call of a capability with these static
    /// facts? (Used by inspect() to decide whether a write is guarded.)
    pub fn may_match_capability(&self, tags: &[String], risk: Risk, se: SideEffect) -> bool {
        (self.tags.is_empty() || self.tags.iter().any(|t| tags.contains(t)))
            && (self.risk.is_empty() || self.risk.contains(&risk))
            && (self.side_effect.is_empty() || self.side_effect.contains(&se))
    }
}

impl PolicySpec {
    /// Whether this policy can act on a capability with these static facts:
    /// host policies always can; declarative ones when their static part can
    /// match and their decision is not `allow`.
    pub fn may_guard(&self, tags: &[String], risk: Risk, se: SideEffect) -> bool {
        if self.mode == PolicyMode::Shadow {
            return false;
        }
        match &self.rule {
            // Host code and Cedar text can decide anything.
            PolicyRule::Host | PolicyRule::Cedar(_) => true,
            PolicyRule::Match { when, decision, .. } => {
                *decision != DecisionKind::Allow && when.may_match_capability(tags, risk, se)
            }
        }
    }
}

/// Parses a policy list at `path`, recording every problem.
pub(crate) fn parse_policy_list(v: &Value, path: &str, p: &mut Problems) -> Vec<PolicySpec> {
    let Value::Array(items) = v else {
        p.push(
            path,
            ProblemCode::WrongType,
            format!("expected an array of policies, got {}", type_name(v)),
        );
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| parse_policy(item, &format!("{path}[{i}]"), p))
        .collect()
}

/// Parses a runtime-level policy list (capability `None` in problems).
pub fn parse_policies(v: &Value) -> Result<Vec<PolicySpec>, Vec<crate::vocab::problem::Problem>> {
    let mut list = Vec::new();
    let out = parse_policy_list(
        v,
        "policies",
        &mut Problems {
            capability: None,
            list: &mut list,
        },
    );
    if list.is_empty() { Ok(out) } else { Err(list) }
}

fn parse_policy(v: &Value, path: &str, p: &mut Problems) -> Option<PolicySpec> {
    let before = p.list.len();
    let mut r = ObjReader::new(v, path, p)?;
    let name = r.str_opt("name", p).map(str::to_owned);
    let mode = match r.get("mode") {
        None => Some(PolicyMode::Enforce),
        Some(m) => crate::vocab::read::enum_value(
            m,
            r.field_path("mode"),
            p,
            PolicyMode::parse,
            PolicyMode::expected,
        ),
    };
    let host = r.bool_opt("host", p).unwrap_or(false);
    let cedar = r.str_opt("cedar", p).map(str::to_owned);
    let actor_attributes = r.get("actorAttributes");
    let when_v = r.get("when");
    let decision_v = r.get("decision");
    let reason = r.str_opt("reason", p).map(str::to_owned);
    let approval_type = r.str_opt("approvalType", p).map(str::to_owned);
    let expires_in_ms = r.positive_opt("expiresInMs", limits::MAX_EXPIRES_IN_MS, p);

    if actor_attributes.is_some() && cedar.is_none() {
        p.push(
            r.field_path("actorAttributes"),
            ProblemCode::ConflictingFields,
            "`actorAttributes` describes the actor to a Cedar policy; this is not one",
        );
    }
    let rule = if let Some(text) = cedar {
        for (present, key) in [
            (host, "host"),
            (when_v.is_some(), "when"),
            (decision_v.is_some(), "decision"),
            (reason.is_some(), "reason"),
            (approval_type.is_some(), "approvalType"),
            (expires_in_ms.is_some(), "expiresInMs"),
        ] {
            if present {
                p.push(
                    r.field_path(key),
                    ProblemCode::ConflictingFields,
                    format!("a Cedar policy decides in its text; `{key}` does not apply"),
                );
            }
        }
        match CedarRule::parse(&text) {
            Ok(rule) => match actor_attributes {
                None => Some(PolicyRule::Cedar(rule)),
                Some(schema) => match rule.with_actor_attributes(schema) {
                    Ok(rule) => Some(PolicyRule::Cedar(rule)),
                    Err(message) => {
                        p.push(
                            r.field_path("actorAttributes"),
                            ProblemCode::InvalidPolicy,
                            message,
                        );
                        None
                    }
                },
            },
            Err(problems) => {
                for problem in problems {
                    p.push(
                        r.field_path("cedar"),
                        ProblemCode::InvalidPolicy,
                        problem.describe(),
                    );
                }
                None
            }
        }
    } else if host {
        for (present, key) in [
            (when_v.is_some(), "when"),
            (decision_v.is_some(), "decision"),
        ] {
            if present {
                p.push(
                    r.field_path(key),
                    ProblemCode::ConflictingFields,
                    format!("a host policy decides in host code; `{key}` does not apply"),
                );
            }
        }
        Some(PolicyRule::Host)
    } else {
        let when = when_v
            .map(|w| parse_matcher(w, &r.field_path("when").to_string(), p))
            .unwrap_or_else(|| Some(Matcher::default()));
        let decision = match decision_v {
            None => {
                p.push(
                    r.field_path("decision"),
                    ProblemCode::MissingField,
                    "a declarative policy needs a `decision` (allow, deny, requireApproval), or `host: true`",
                );
                None
            }
            Some(d) => crate::vocab::read::enum_value(
                d,
                r.field_path("decision"),
                p,
                DecisionKind::parse,
                DecisionKind::expected,
            ),
        };
        match (when, decision) {
            (Some(when), Some(decision)) => Some(PolicyRule::Match {
                when,
                decision,
                reason,
                approval_type,
                expires_in_ms,
            }),
            _ => None,
        }
    };
    r.finish(p);
    if p.list.len() != before {
        return None;
    }
    Some(PolicySpec {
        name,
        mode: mode?,
        rule: rule?,
    })
}

fn parse_matcher(v: &Value, path: &str, p: &mut Problems) -> Option<Matcher> {
    let mut r = ObjReader::new(v, path, p)?;
    let mut m = Matcher::default();
    if let Some(t) = r.get("tags") {
        m.tags = string_list(t, r.field_path("tags"), p).unwrap_or_default();
    }
    if let Some(x) = r.get("risk") {
        m.risk = enum_list(x, r.field_path("risk"), p, Risk::parse, Risk::expected);
    }
    if let Some(x) = r.get("sideEffect") {
        m.side_effect = enum_list(
            x,
            r.field_path("sideEffect"),
            p,
            SideEffect::parse,
            SideEffect::expected,
        );
    }
    if let Some(x) = r.get("surface") {
        m.surface = enum_list(x, r.field_path("surface"), p, Surface::parse, || {
            "direct, aiSdk, mcp, workflow, test".to_owned()
        });
    }
    if let Some(x) = r.get("actorRole") {
        m.actor_role = string_list(x, r.field_path("actorRole"), p).unwrap_or_default();
    }
    if let Some(x) = r.get("input") {
        let ipath = r.field_path("input").to_string();
        if let Some(list) = string_list(x, &ipath, p) {
            for (i, src) in list.iter().enumerate() {
                match Predicate::parse(src) {
                    Ok(pr) => m.input.push(pr),
                    Err(msg) => p.push(format!("{ipath}[{i}]"), ProblemCode::InvalidPredicate, msg),
                }
            }
        }
    }
    r.finish(p);
    Some(m)
}

fn enum_list<T>(
    v: &Value,
    path: impl std::fmt::Display + Copy,
    p: &mut Problems,
    parse: fn(&str) -> Option<T>,
    expected: fn() -> String,
) -> Vec<T> {
    let Some(items) = string_list(v, path, p) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, s) in items.iter().enumerate() {
        match parse(s) {
            Some(x) => out.push(x),
            None => p.push(
                format!("{path}[{i}]"),
                ProblemCode::UnknownValue,
                format!("unknown value `{s}`; expected one of {}", expected()),
            ),
        }
    }
    out
}
