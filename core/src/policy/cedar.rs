//! Cedar policies (issue 21): a policy kind whose rule is a Cedar policy
//! set, parsed once at registry build and evaluated here, natively, so the
//! same text gives the same decision in every binding.
//!
//! One `{"cedar": "<policy text>"}` entry is one policy set and makes one
//! decision. The request it is asked about:
//!
//! * principal `Actor::"<id>"` (`Actor::""` for an anonymous caller) with
//!   `roles` (a set of strings), `attributes` (a record: the actor's
//!   attributes) and `anonymous` (a bool);
//! * action `Action::"<surface>"` (`direct`, `aiSdk`, `mcp`, `workflow`,
//!   `test`), each one `in Action::"invoke"`;
//! * resource `Capability::"<id>"` with `sideEffect`, `risk`,
//!   `discovery` (strings) and `tags` (a set of strings);
//! * context `{input, surface, now?, requestId?, traceparent?, agentId?,
//!   sessionId?}`, `input` the validated input, `now` the call's time (a
//!   Cedar `datetime`, UTC, from the host's clock).
//!
//! JSON becomes Cedar values as Cedar's own JSON form reads them (objects
//! records, arrays sets, integers longs), except what Cedar has no value
//! for: `null` and numbers that are not 64-bit integers are left out, so a
//! policy that reads one fails to evaluate (and fails closed).
//!
//! Decisions: a satisfied `forbid` is deny (its `@reason("…")` the reason);
//! else a satisfied `permit` is allow, or requireApproval when it carries
//! `@requireApproval` (its value, when not empty, the approval type);
//! nothing satisfied is abstain; any evaluation error is a failed policy,
//! which denies (fail closed). `@id("…")` names a policy (the ids that
//! decided are reported); otherwise Cedar's `policy0`, `policy1`, ….

use std::collections::{HashMap, HashSet};
use std::str::FromStr;

use cedar_policy::{
    Authorizer, Context, Decision, Entities, Entity, EntityId, EntityTypeName, EntityUid, Policy,
    PolicyId, PolicySet, Request, ResourceConstraint, RestrictedExpression, Schema, ValidationMode,
    Validator,
};
use miette::Diagnostic;
use serde_json::Value;

use super::cedar_schema::{cedar_type, input_record_type, schema_json};
use crate::frame::Frame;
use crate::meta::{Discovery, Risk, SideEffect};

/// A parsed Cedar policy set.
#[derive(Clone, Debug, PartialEq)]
pub struct CedarRule {
    set: PolicySet,
    /// The text it was parsed from: validation problems point into it.
    text: String,
    /// The Cedar record type of the actor's attributes, from the entry's
    /// `actorAttributes` JSON Schema (see [`super::cedar_schema`]).
    actor_attributes: Option<Value>,
}

/// One problem in a policy text: what, and where (1-based line and column
/// of its first labelled span, when Cedar gives one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CedarProblem {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl CedarProblem {
    fn at(message: String, text: &str, offset: Option<usize>) -> CedarProblem {
        let (line, column) = match offset {
            Some(o) => {
                let before = &text[..o.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        CedarProblem {
            message,
            line,
            column,
        }
    }

    /// The problem as a registry problem's message.
    pub fn describe(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("Cedar, line {l}, column {c}: {}", self.message),
            _ => format!("Cedar: {}", self.message),
        }
    }
}

impl CedarRule {
    /// Parses `text` (one or more Cedar policies; templates are refused).
    pub fn parse(text: &str) -> Result<CedarRule, Vec<CedarProblem>> {
        let parsed = PolicySet::from_str(text).map_err(|errors| {
            errors
                .iter()
                .map(|e| {
                    let offset = e.labels().and_then(|mut l| l.next()).map(|l| l.offset());
                    CedarProblem::at(e.to_string(), text, offset)
                })
                .collect::<Vec<_>>()
        })?;
        if parsed.templates().next().is_some() {
            return Err(vec![CedarProblem::at(
                "policy templates are not supported; write the policy with its values".into(),
                text,
                None,
            )]);
        }
        // `@id("…")` names a policy; the others keep Cedar's ids.
        let mut set = PolicySet::new();
        for policy in parsed.policies() {
            let named = match policy.annotation("id") {
                Some(id) if !id.is_empty() => policy.new_id(PolicyId::new(id)),
                _ => policy.clone(),
            };
            if let Err(e) = set.add(named) {
                return Err(vec![CedarProblem::at(e.to_string(), text, None)]);
            }
        }
        if set.policies().next().is_none() {
            return Err(vec![CedarProblem::at(
                "the policy text holds no policy".into(),
                text,
                None,
            )]);
        }
        Ok(CedarRule {
            set,
            text: text.to_owned(),
            actor_attributes: None,
        })
    }

    /// Declares the actor's attributes (a JSON Schema of an object), which
    /// the generated schema otherwise leaves empty.
    pub fn with_actor_attributes(mut self, schema: &Value) -> Result<CedarRule, String> {
        match cedar_type(schema) {
            Some(t) if t["type"] == "Record" => {
                self.actor_attributes = Some(t);
                Ok(self)
            }
            _ => Err("`actorAttributes` must be the JSON Schema of an object".into()),
        }
    }

    /// Type-checks every policy as the registry does for a capability
    /// whose input has this JSON Schema (for tools such as the CLI's
    /// `policy eval`; the registry checks each policy where it applies).
    pub fn check(&self, input_schema: Option<&Value>) -> Vec<CedarProblem> {
        let input = input_record_type(input_schema);
        self.validate(Some(&input), |_| true)
    }

    /// Type-checks the policies against the schema generated for one
    /// capability (`input`: the Cedar type of its input, when it has one).
    /// Only the policies `keep` accepts are checked.
    pub(crate) fn validate(
        &self,
        input: Option<&Value>,
        keep: impl Fn(&Scope) -> bool,
    ) -> Vec<CedarProblem> {
        let schema = schema_json(input, self.actor_attributes.as_ref());
        let schema = match Schema::from_json_value(schema) {
            Ok(s) => s,
            Err(e) => {
                return vec![CedarProblem::at(
                    format!("the generated schema: {e}"),
                    "",
                    None,
                )];
            }
        };
        let policies = self.set.policies().filter(|p| keep(&Scope::of(p))).cloned();
        let Ok(set) = PolicySet::from_policies(policies) else {
            return Vec::new();
        };
        let result = Validator::new(schema).validate(&set, ValidationMode::Strict);
        let mut problems: Vec<CedarProblem> = result
            .validation_errors()
            .map(|e| {
                let offset = e.labels().and_then(|mut l| l.next()).map(|l| l.offset());
                let message = match e.help() {
                    Some(help) => format!("{e} ({help})"),
                    None => e.to_string(),
                };
                CedarProblem::at(message, &self.text, offset)
            })
            .collect();
        // Cedar checks each action (surface) apart and in no fixed order:
        // one problem per place in the text, in the text's order.
        problems
            .sort_by(|a, b| (a.line, a.column, &a.message).cmp(&(b.line, b.column, &b.message)));
        problems.dedup_by(|a, b| a.line.is_some() && (a.line, a.column) == (b.line, b.column));
        problems
    }

    /// Each policy's scope, with its id.
    pub(crate) fn scopes(&self) -> Vec<(String, Scope)> {
        self.set
            .policies()
            .map(|p| (p.id().to_string(), Scope::of(p)))
            .collect()
    }

    /// The policy ids, in the set's order.
    pub fn policy_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.set.policies().map(|p| p.id().to_string()).collect();
        ids.sort();
        ids
    }

    /// The decision for one call.
    pub fn evaluate(&self, call: &CedarCall) -> CedarDecision {
        let Ok((request, entities)) = call.request() else {
            return CedarDecision::failed();
        };
        let response = Authorizer::new().is_authorized(&request, &self.set, &entities);
        if response.diagnostics().errors().next().is_some() {
            return CedarDecision::failed();
        }
        let mut deciding: Vec<&PolicyId> = response.diagnostics().reason().collect();
        deciding.sort_by_key(|id| id.to_string());
        let ids = deciding.iter().map(|id| id.to_string()).collect();
        let annotation = |key: &str| {
            deciding
                .iter()
                .find_map(|id| self.set.annotation(id, key).map(str::to_owned))
        };
        let kind = match (response.decision(), deciding.is_empty()) {
            (_, true) => CedarDecisionKind::Abstain,
            (Decision::Deny, false) => CedarDecisionKind::Deny {
                reason: annotation("reason").filter(|r| !r.is_empty()),
            },
            (Decision::Allow, false) => match annotation("requireApproval") {
                Some(kind) => CedarDecisionKind::RequireApproval {
                    approval_type: Some(kind).filter(|k| !k.is_empty()),
                    reason: annotation("reason").filter(|r| !r.is_empty()),
                },
                None => CedarDecisionKind::Allow,
            },
        };
        CedarDecision {
            kind,
            policies: ids,
        }
    }
}

/// Which capabilities a policy can apply to, by its resource scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// `resource == Capability::"<id>"` (or `in`, which for a capability,
    /// having no parents, is the same).
    Only(String),
    /// Any capability (or a resource that is not a capability: strict
    /// validation refuses it).
    Any,
}

impl Scope {
    fn of(policy: &Policy) -> Scope {
        match policy.resource_constraint() {
            ResourceConstraint::Eq(uid) | ResourceConstraint::In(uid)
                if uid.type_name().to_string() == "Capability" =>
            {
                Scope::Only(uid.id().unescaped().to_owned())
            }
            _ => Scope::Any,
        }
    }
}

/// What a Cedar policy set decided, and which policies decided it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CedarDecision {
    pub kind: CedarDecisionKind,
    /// The ids of the policies that determined the decision (none for
    /// abstain and for a failed evaluation).
    pub policies: Vec<String>,
}

impl CedarDecision {
    fn failed() -> CedarDecision {
        CedarDecision {
            kind: CedarDecisionKind::Failed,
            policies: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CedarDecisionKind {
    Allow,
    Deny {
        reason: Option<String>,
    },
    RequireApproval {
        approval_type: Option<String>,
        reason: Option<String>,
    },
    Abstain,
    /// The request could not be evaluated (a policy errored): fail closed.
    Failed,
}

/// What a Cedar policy is asked about: the frozen frame, the capability's
/// static facts, and the validated input.
pub struct CedarCall<'a> {
    pub capability_id: &'a str,
    pub side_effect: SideEffect,
    pub risk: Risk,
    pub discovery: Discovery,
    pub tags: &'a [String],
    pub frame: &'a Frame,
    pub input: &'a Value,
    /// The call's time as the host's clock last gave it (unix ms): Cedar's
    /// `context.now`, a `datetime`. 0 (a host that did not read its clock)
    /// leaves it out, so a policy that reads it unguarded fails closed.
    pub now_ms: u64,
}

fn uid(kind: &str, id: &str) -> Result<EntityUid, ()> {
    let kind = EntityTypeName::from_str(kind).map_err(drop)?;
    Ok(EntityUid::from_type_name_and_id(kind, EntityId::new(id)))
}

fn string_set<'s>(items: impl IntoIterator<Item = &'s String>) -> RestrictedExpression {
    RestrictedExpression::new_set(
        items
            .into_iter()
            .map(|s| RestrictedExpression::new_string(s.clone())),
    )
}

/// A JSON value as Cedar reads it; `None` for what Cedar has no value for
/// (`null`, a number that is not a 64-bit integer).
fn cedar_value(v: &Value) -> Option<RestrictedExpression> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => RestrictedExpression::new_bool(*b),
        Value::Number(n) => RestrictedExpression::new_long(n.as_i64()?),
        Value::String(s) => RestrictedExpression::new_string(s.clone()),
        Value::Array(items) => RestrictedExpression::new_set(items.iter().filter_map(cedar_value)),
        Value::Object(map) => RestrictedExpression::new_record(
            map.iter()
                .filter_map(|(k, v)| cedar_value(v).map(|v| (k.clone(), v))),
        )
        .ok()?,
    })
}

impl CedarCall<'_> {
    fn request(&self) -> Result<(Request, Entities), ()> {
        let actor = &self.frame.actor;
        let principal = uid("Actor", actor.id.as_deref().unwrap_or(""))?;
        let attributes = match cedar_value(&Value::Object(actor.attributes.clone())) {
            Some(a) => a,
            None => RestrictedExpression::new_record([]).map_err(drop)?,
        };
        let principal_entity = Entity::new(
            principal.clone(),
            HashMap::from([
                ("roles".to_owned(), string_set(&actor.roles)),
                ("attributes".to_owned(), attributes),
                (
                    "anonymous".to_owned(),
                    RestrictedExpression::new_bool(actor.id.is_none()),
                ),
            ]),
            HashSet::new(),
        )
        .map_err(drop)?;

        let invoke = uid("Action", "invoke")?;
        let action = uid("Action", self.frame.surface.as_str())?;
        let action_entity = Entity::new_no_attrs(action.clone(), HashSet::from([invoke.clone()]));
        let invoke_entity = Entity::new_no_attrs(invoke, HashSet::new());

        let resource = uid("Capability", self.capability_id)?;
        let resource_entity = Entity::new(
            resource.clone(),
            HashMap::from([
                (
                    "sideEffect".to_owned(),
                    RestrictedExpression::new_string(self.side_effect.as_str().to_owned()),
                ),
                (
                    "risk".to_owned(),
                    RestrictedExpression::new_string(self.risk.as_str().to_owned()),
                ),
                (
                    "discovery".to_owned(),
                    RestrictedExpression::new_string(self.discovery.as_str().to_owned()),
                ),
                ("tags".to_owned(), string_set(self.tags)),
            ]),
            HashSet::new(),
        )
        .map_err(drop)?;

        let mut context = vec![(
            "surface".to_owned(),
            RestrictedExpression::new_string(self.frame.surface.as_str().to_owned()),
        )];
        if let Some(input) = cedar_value(self.input) {
            context.push(("input".to_owned(), input));
        }
        let text = |k: &str, v: Option<&String>| {
            v.map(|v| (k.to_owned(), RestrictedExpression::new_string(v.clone())))
        };
        context.extend(text("requestId", self.frame.request_id.as_ref()));
        context.extend(text(
            "traceparent",
            self.frame.trace.as_ref().map(|t| &t.traceparent),
        ));
        context.extend(text("agentId", self.frame.agent_id.as_ref()));
        context.extend(text("sessionId", self.frame.session_id.as_ref()));
        if self.now_ms != 0 {
            context.push((
                "now".to_owned(),
                RestrictedExpression::new_datetime(crate::clock::utc_rfc3339(self.now_ms)),
            ));
        }
        let context = Context::from_pairs(context).map_err(drop)?;

        let request = Request::new(principal, action, resource, context, None).map_err(drop)?;
        let entities = Entities::from_entities(
            [
                principal_entity,
                action_entity,
                invoke_entity,
                resource_entity,
            ],
            None,
        )
        .map_err(drop)?;
        Ok((request, entities))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Actor;
    use crate::meta::Surface;
    use serde_json::json;

    fn call<'a>(frame: &'a Frame, input: &'a Value, tags: &'a [String]) -> CedarCall<'a> {
        CedarCall {
            capability_id: "orders.refund",
            side_effect: SideEffect::Write,
            risk: Risk::High,
            discovery: Discovery::Discoverable,
            tags,
            frame,
            input,
            now_ms: 1_796_635_800_000, // 2026-12-07T09:30:00Z, a Monday
        }
    }

    fn frame(id: Option<&str>, roles: &[&str]) -> Frame {
        let mut f = Frame::new(Surface::Mcp);
        f.actor = Actor {
            id: id.map(str::to_owned),
            roles: roles.iter().map(|r| (*r).to_owned()).collect(),
            attributes: serde_json::Map::new(),
        };
        f
    }

    const RULES: &str = r#"
        @id("managers-refund")
        permit (principal, action in Action::"invoke", resource == Capability::"orders.refund")
        when { principal.roles.contains("manager") };

        @id("big-refunds") @requireApproval("finance") @reason("Refunds over 1000 need finance.")
        permit (principal, action, resource)
        when { context.input.cents > 100000 };

        @id("no-guests") @reason("Guests cannot refund.")
        forbid (principal, action, resource) when { principal.roles.contains("guest") };
    "#;

    #[test]
    fn permit_forbid_require_approval_and_abstain() {
        let rule = CedarRule::parse(RULES).unwrap();
        assert_eq!(
            rule.policy_ids(),
            ["big-refunds", "managers-refund", "no-guests"]
        );
        let tags = vec!["billing".to_owned()];
        let small = json!({"cents": 500});
        let big = json!({"cents": 200000});

        let m = frame(Some("ann"), &["manager"]);
        let d = rule.evaluate(&call(&m, &small, &tags));
        assert_eq!(d.kind, CedarDecisionKind::Allow);
        assert_eq!(d.policies, ["managers-refund"]);

        let d = rule.evaluate(&call(&m, &big, &tags));
        assert_eq!(
            d.kind,
            CedarDecisionKind::RequireApproval {
                approval_type: Some("finance".into()),
                reason: Some("Refunds over 1000 need finance.".into())
            }
        );

        let g = frame(Some("bob"), &["guest", "manager"]);
        let d = rule.evaluate(&call(&g, &small, &tags));
        assert_eq!(
            d.kind,
            CedarDecisionKind::Deny {
                reason: Some("Guests cannot refund.".into())
            }
        );
        assert_eq!(d.policies, ["no-guests"]);

        let nobody = frame(None, &[]);
        assert_eq!(
            rule.evaluate(&call(&nobody, &small, &tags)).kind,
            CedarDecisionKind::Abstain
        );
    }

    #[test]
    fn reading_what_is_not_there_fails_closed() {
        let rule = CedarRule::parse(
            r#"permit (principal, action, resource) when { context.input.amount > 10 };"#,
        )
        .unwrap();
        let f = frame(Some("ann"), &[]);
        // A float has no Cedar value: left out, so the policy errors.
        let d = rule.evaluate(&call(&f, &json!({"amount": 12.5}), &[]));
        assert_eq!(d.kind, CedarDecisionKind::Failed);
        let d = rule.evaluate(&call(&f, &json!({"amount": 12}), &[]));
        assert_eq!(d.kind, CedarDecisionKind::Allow);
    }

    #[test]
    fn business_hours_read_the_call_time() {
        // 09:00–17:00 in UTC-5: 14:00–22:00 UTC.
        let rule = CedarRule::parse(
            r#"@reason("Refunds only in business hours.")
            forbid (principal, action, resource)
            unless {
                context has now &&
                context.now.offset(duration("-5h")).toTime() >= duration("9h") &&
                context.now.offset(duration("-5h")).toTime() < duration("17h")
            };"#,
        )
        .unwrap();
        assert!(rule.check(None).is_empty(), "{:?}", rule.check(None));
        let f = frame(Some("ann"), &[]);
        let input = json!({});
        let at = |now_ms| {
            let mut c = call(&f, &input, &[]);
            c.now_ms = now_ms;
            rule.evaluate(&c).kind
        };
        let nine_thirty_utc = 1_796_635_800_000;
        let hour = 3_600_000;
        assert!(matches!(
            at(nine_thirty_utc),
            CedarDecisionKind::Deny { .. }
        ));
        assert_eq!(at(nine_thirty_utc + 6 * hour), CedarDecisionKind::Abstain);
        // No clock: `context has now` is false, so the forbid applies.
        assert!(matches!(at(0), CedarDecisionKind::Deny { .. }));
    }

    #[test]
    fn a_syntax_error_names_its_line_and_column() {
        let problems = CedarRule::parse(
            "permit (principal, action, resource);\nforbid (principal, action resource);",
        )
        .unwrap_err();
        assert_eq!(problems[0].line, Some(2), "{problems:?}");
        assert!(problems[0].column.is_some());
        assert!(problems[0].describe().starts_with("Cedar, line 2, column "));
        assert!(CedarRule::parse("// nothing").is_err());
        assert!(
            CedarRule::parse("permit (principal == ?principal, action, resource);").is_err(),
            "templates are refused"
        );
    }
}
