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

use std::collections::{BTreeSet, HashMap, HashSet};
use std::str::FromStr;
use std::sync::LazyLock;

use cedar_policy::{
    Authorizer, Context, Decision, Entities, Entity, EntityId, EntityTypeName, EntityUid, Policy,
    PolicyId, PolicySet, Request, ResourceConstraint, RestrictedExpression, Schema, ValidationMode,
    ValidationWarning, Validator,
};
use miette::Diagnostic;
use serde_json::Value;

use super::cedar_schema::{cedar_type, checked_input_type, schema_json};
use super::cedar_value;
use crate::frame::Frame;
use crate::vocab::{Discovery, Risk, SideEffect};

/// A parsed Cedar policy set.
#[derive(Clone, Debug, PartialEq)]
pub struct CedarRule {
    set: PolicySet,
    /// The text it was parsed from: validation problems point into it.
    text: String,
    /// The Cedar record type of the actor's attributes, from the entry's
    /// `actorAttributes` JSON Schema (see [`super::cedar_schema`]).
    actor_attributes: Option<Value>,
    /// Whether a policy can see `context.now`. Building a Cedar `datetime`
    /// costs about a tenth of an evaluation, so a set that never reads
    /// the time is not handed it (it could not tell).
    reads_now: bool,
    /// The attributes of `context.input` the policies name (`None`: one
    /// uses the input whole). Type-checking needs only these, so a set is
    /// checked once for all capabilities whose inputs agree on them.
    input_attributes: Option<BTreeSet<String>>,
    /// Each policy's `@reason` and `@requireApproval`, read once (Cedar
    /// parses the key of every annotation lookup).
    notes: HashMap<String, Notes>,
}

#[derive(Clone, Debug, PartialEq, Default)]
struct Notes {
    reason: Option<String>,
    require_approval: Option<String>,
}

/// One problem in a policy text: what, and where (1-based line and column
/// of its first labelled span, when Cedar gives one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CedarProblem {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// The policy type-checks but can never apply here (its condition is
    /// always false, or its action scope names no surface): for a
    /// runtime policy a problem only when that holds for every capability.
    pub never_applies: bool,
}

impl CedarProblem {
    fn at(message: String, text: &str, offset: Option<usize>) -> CedarProblem {
        let (line, column) = match offset {
            Some(o) => match text.get(..o.min(text.len())) {
                Some(before) => {
                    let line = before.matches('\n').count() + 1;
                    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                    let column = before[line_start..].chars().count() + 1;
                    (Some(line), Some(column))
                }
                None => (None, None),
            },
            None => (None, None),
        };
        CedarProblem {
            message,
            line,
            column,
            never_applies: false,
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
        let ests: Vec<Option<Value>> = set.policies().map(|p| p.to_json().ok()).collect();
        let reads_now = ests.iter().any(|est| est.as_ref().is_none_or(sees_now));
        let mut input_attributes = Some(BTreeSet::new());
        for est in &ests {
            match (
                est.as_ref().and_then(input_names),
                input_attributes.as_mut(),
            ) {
                (Some(names), Some(all)) => all.extend(names),
                _ => input_attributes = None,
            }
        }
        let notes = set
            .policies()
            .map(|p| {
                let notes = Notes {
                    reason: p.annotation("reason").map(str::to_owned),
                    require_approval: p.annotation("requireApproval").map(str::to_owned),
                };
                (p.id().to_string(), notes)
            })
            .collect();
        Ok(CedarRule {
            set,
            text: text.to_owned(),
            actor_attributes: None,
            reads_now,
            input_attributes,
            notes,
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

    /// Type-checks every policy as the registry does for a capability whose
    /// input is read through `input_type` (`cedar_input_read_type` of its
    /// schema; for tools such as the CLI's `policy eval`: the registry
    /// checks each policy where it applies).
    pub fn check(&self, input_type: Option<&Value>) -> Vec<CedarProblem> {
        self.validate(&checked_input_type(input_type), |_| true)
    }

    /// The part of a capability's input type these policies can see: the
    /// record cut to the attributes they name (all of it when one uses the
    /// input whole). Capabilities whose cut types are equal share a check.
    pub(crate) fn input_seen(&self, input: &Value) -> Value {
        let Some(names) = &self.input_attributes else {
            return input.clone();
        };
        let mut cut = input.clone();
        if let Some(attributes) = cut.get_mut("attributes").and_then(Value::as_object_mut) {
            attributes.retain(|name, _| names.contains(name));
        }
        cut
    }

    /// A key equal for policy sets that need the same schema: the input
    /// type they see and the actor's attributes.
    pub(crate) fn schema_key(&self, input_seen: &Value) -> String {
        let actor = self.actor_attributes.as_ref().unwrap_or(&Value::Null);
        format!("{input_seen}|{actor}")
    }

    /// The validator for a capability whose input has the Cedar type
    /// `input` (cut or whole).
    pub(crate) fn validator(&self, input: &Value) -> Result<Validator, CedarProblem> {
        Schema::from_json_value(schema_json(Some(input), self.actor_attributes.as_ref()))
            .map(Validator::new)
            .map_err(|e| CedarProblem::at(format!("the generated schema: {e}"), "", None))
    }

    /// Type-checks the policies `keep` accepts against the schema generated
    /// for a capability whose input has the Cedar type `input`.
    pub(crate) fn validate(
        &self,
        input: &Value,
        keep: impl Fn(&Scope) -> bool,
    ) -> Vec<CedarProblem> {
        match self.validator(&self.input_seen(input)) {
            Ok(v) => {
                let problems = self.validate_with(&v, &keep);
                if problems.is_empty() {
                    problems
                } else {
                    self.explain(input, keep)
                }
            }
            Err(problem) => vec![problem],
        }
    }

    /// The problems again against the whole input type, on the error path
    /// only: the cut type checks the same, but Cedar's hints ("did you
    /// mean `cents`?") need the attributes the policy did not name.
    pub(crate) fn explain(
        &self,
        input: &Value,
        keep: impl Fn(&Scope) -> bool,
    ) -> Vec<CedarProblem> {
        match self.validator(input) {
            Ok(v) => self.validate_with(&v, &keep),
            Err(problem) => vec![problem],
        }
    }

    /// Type-checks the policies `keep` accepts with `validator`.
    pub(crate) fn validate_with(
        &self,
        validator: &Validator,
        keep: &impl Fn(&Scope) -> bool,
    ) -> Vec<CedarProblem> {
        let policies = self.set.policies().filter(|p| keep(&Scope::of(p))).cloned();
        let Ok(set) = PolicySet::from_policies(policies) else {
            return Vec::new();
        };
        let result = validator.validate(&set, ValidationMode::Strict);
        let problem = |e: &dyn Diagnostic, never_applies: bool| {
            let offset = e.labels().and_then(|mut l| l.next()).map(|l| l.offset());
            let message = match e.help() {
                Some(help) => format!("{e} ({help})"),
                None => e.to_string(),
            };
            CedarProblem {
                never_applies,
                ..CedarProblem::at(message, &self.text, offset)
            }
        };
        let mut problems: Vec<CedarProblem> = result
            .validation_errors()
            .map(|e| problem(e, false))
            .collect();
        // A policy that can never apply is a mistake worth a build error
        // (a `forbid` that reads an attribute the input does not have would
        // silently never deny).
        problems.extend(result.validation_warnings().filter_map(|w| match w {
            ValidationWarning::ImpossiblePolicy(_)
            | ValidationWarning::InvalidActionApplication(_) => Some(problem(w, true)),
            _ => None,
        }));
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
        let Ok((request, entities)) = call.request(self.reads_now, self.actor_attributes.as_ref())
        else {
            return CedarDecision::failed();
        };
        let response = Authorizer::new().is_authorized(&request, &self.set, &entities);
        if response.diagnostics().errors().next().is_some() {
            return CedarDecision::failed();
        }
        let mut ids: Vec<String> = response
            .diagnostics()
            .reason()
            .map(PolicyId::to_string)
            .collect();
        ids.sort();
        let note = |pick: fn(&Notes) -> &Option<String>| {
            ids.iter()
                .find_map(|id| self.notes.get(id).and_then(|n| pick(n).clone()))
        };
        let kind = match (response.decision(), ids.is_empty()) {
            (_, true) => CedarDecisionKind::Abstain,
            (Decision::Deny, false) => CedarDecisionKind::Deny {
                reason: note(|n| &n.reason).filter(|r| !r.is_empty()),
            },
            (Decision::Allow, false) => match note(|n| &n.require_approval) {
                Some(kind) => CedarDecisionKind::RequireApproval {
                    approval_type: Some(kind).filter(|k| !k.is_empty()),
                    reason: note(|n| &n.reason).filter(|r| !r.is_empty()),
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

/// How deep the walks below follow a policy's JSON form; deeper counts as
/// seeing everything (the conservative answer).
const MAX_WALK_DEPTH: usize = 256;

fn is_context(v: &Value) -> bool {
    v.get("Var").and_then(Value::as_str) == Some("context")
}

/// The attribute names an access (`.`) or test (`has`) names: one, or a
/// path (`e has a.b` is `["a", "b"]`).
fn attrs(access: &Value) -> Vec<&str> {
    match access.get("attr") {
        Some(Value::String(a)) => vec![a.as_str()],
        Some(Value::Array(path)) => path.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether a policy (its JSON form, where names are unescaped) can see
/// `context.now`: it names the attribute `now`, or uses `context` other
/// than to read or test one of its attributes (a whole-record comparison
/// would see it).
fn sees_now(est: &Value) -> bool {
    fn walk(v: &Value, depth: usize, uses: &mut usize, reads: &mut usize) -> bool {
        if depth > MAX_WALK_DEPTH {
            return true;
        }
        match v {
            Value::Object(m) => {
                if attrs(v).contains(&"now") {
                    return true;
                }
                if is_context(v) {
                    *uses += 1;
                }
                for (key, child) in m {
                    if (key == "." || key == "has") && child.get("left").is_some_and(is_context) {
                        *reads += 1;
                    }
                    if walk(child, depth + 1, uses, reads) {
                        return true;
                    }
                }
                false
            }
            Value::Array(items) => items.iter().any(|i| walk(i, depth + 1, uses, reads)),
            _ => false,
        }
    }
    let (mut uses, mut reads) = (0, 0);
    walk(est, 0, &mut uses, &mut reads) || uses != reads
}

/// The attributes of `context.input` a policy (its JSON form) names, or
/// `None` when it uses the input, or the whole context, as a value (a
/// comparison of records sees every attribute). Record literals' keys
/// count as named, so a comparison with one keeps the attributes it lists.
fn input_names(est: &Value) -> Option<BTreeSet<String>> {
    fn is_input(v: &Value) -> bool {
        v.get(".")
            .is_some_and(|a| a.get("left").is_some_and(is_context) && attrs(a) == ["input"])
    }
    /// `read`: `v` is the left side of an attribute read or test.
    fn walk(v: &Value, read: bool, depth: usize, names: &mut BTreeSet<String>) -> bool {
        if depth > MAX_WALK_DEPTH {
            return false;
        }
        match v {
            Value::Object(m) => {
                if !read && (is_context(v) || is_input(v)) {
                    return false;
                }
                for (key, child) in m {
                    let ok = match (key.as_str(), child) {
                        ("." | "has", Value::Object(_)) => {
                            let left = child.get("left").unwrap_or(&Value::Null);
                            let path = attrs(child);
                            if is_input(left) {
                                names.extend(path.first().map(|a| (*a).to_owned()));
                            } else if is_context(left) && path.first() == Some(&"input") {
                                // `context has input.a`
                                names.extend(path.get(1).map(|a| (*a).to_owned()));
                            }
                            walk(left, true, depth + 1, names)
                        }
                        ("Record", Value::Object(fields)) => fields.iter().all(|(k, field)| {
                            names.insert(k.clone());
                            walk(field, false, depth + 1, names)
                        }),
                        _ => walk(child, false, depth + 1, names),
                    };
                    if !ok {
                        return false;
                    }
                }
                true
            }
            Value::Array(items) => items.iter().all(|i| walk(i, false, depth + 1, names)),
            _ => true,
        }
    }
    let mut names = BTreeSet::new();
    walk(est, false, 0, &mut names).then_some(names)
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
    /// The Cedar type the input is read through (the capability's, see
    /// `cedar_schema::input_type`); `None` reads it untyped.
    pub input_type: Option<&'a Value>,
}

/// The three entity type names, parsed once: Cedar parses a name with its
/// full grammar, which cost a quarter of an evaluation when done per call.
struct TypeNames {
    actor: EntityTypeName,
    action: EntityTypeName,
    capability: EntityTypeName,
}

static TYPE_NAMES: LazyLock<Option<TypeNames>> = LazyLock::new(|| {
    Some(TypeNames {
        actor: EntityTypeName::from_str("Actor").ok()?,
        action: EntityTypeName::from_str("Action").ok()?,
        capability: EntityTypeName::from_str("Capability").ok()?,
    })
});

fn uid(kind: &EntityTypeName, id: &str) -> EntityUid {
    EntityUid::from_type_name_and_id(kind.clone(), EntityId::new(id))
}

fn string_set<'s>(items: impl IntoIterator<Item = &'s String>) -> RestrictedExpression {
    RestrictedExpression::new_set(
        items
            .into_iter()
            .map(|s| RestrictedExpression::new_string(s.clone())),
    )
}

impl CedarCall<'_> {
    /// The request and entities, or `Err` when a value does not fit what
    /// the policy was checked against (`cedar_value`), or the set reads
    /// the time and the host gave none: the decision is then Failed.
    fn request(
        &self,
        with_now: bool,
        actor_type: Option<&Value>,
    ) -> Result<(Request, Entities), ()> {
        let names = TYPE_NAMES.as_ref().ok_or(())?;
        let actor = &self.frame.actor;
        let principal = uid(&names.actor, actor.id.as_deref().unwrap_or(""));
        let attributes = cedar_value::record(&actor.attributes, actor_type).map_err(drop)?;
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

        let invoke = uid(&names.action, "invoke");
        let action = uid(&names.action, self.frame.surface.as_str());
        let action_entity = Entity::new_no_attrs(action.clone(), HashSet::from([invoke.clone()]));
        let invoke_entity = Entity::new_no_attrs(invoke, HashSet::new());

        let resource = uid(&names.capability, self.capability_id);
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
        let input = match self.input_type {
            Some(t) => cedar_value::typed(self.input, t),
            None => cedar_value::untyped(self.input),
        }
        .map_err(drop)?;
        if let Some(input) = input {
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
        if with_now {
            if self.now_ms == 0 {
                return Err(()); // the set reads the time; there is none
            }
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
    use crate::vocab::Surface;
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
            input_type: None,
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
        // No clock: a set that reads the time cannot be evaluated (closed).
        assert_eq!(at(0), CedarDecisionKind::Failed);
    }

    #[test]
    fn what_a_policy_reads_of_the_input_and_the_clock() {
        let read = |text: &str| {
            let rule = CedarRule::parse(text).unwrap();
            (rule.input_attributes, rule.reads_now)
        };
        let names = |n: &[&str]| Some(n.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>());
        assert_eq!(
            read(
                "permit (principal, action, resource) when { context.input.cents > 3 && context.input has note };"
            ),
            (names(&["cents", "note"]), false)
        );
        assert_eq!(
            read(
                "permit (principal, action, resource) when { context.input[\"c\\u{65}nts\"] > 3 };"
            ),
            (names(&["cents"]), false),
            "escapes are read as Cedar reads them"
        );
        assert_eq!(
            read("permit (principal, action, resource) when { context.input == {cents: 3} };"),
            (None, false),
            "the input as a value: every attribute matters"
        );
        assert_eq!(
            read("permit (principal, action, resource) when { context == {surface: \"mcp\"} };"),
            (None, true),
            "the context as a value sees the input and the time"
        );
        assert_eq!(
            read(
                "permit (principal, action, resource) when { context has now && context.surface == \"mcp\" };"
            ),
            (names(&[]), true)
        );
        assert_eq!(
            read(
                "permit (principal, action, resource) when { [context.input.lines].contains({sku: \"x\"}) };"
            ),
            (names(&["lines", "sku"]), false)
        );
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
