//! Cedar policies type-checked at registry build (issue 21): every Cedar
//! policy is validated, in Cedar's strict mode, against the schema the core
//! generates for each capability it can apply to (see
//! `policy::cedar_schema`). A policy that reads an attribute nobody
//! declared, reads an optional one without `has`, or compares the wrong
//! types is an INVALID_POLICY problem in the one aggregate error, with its
//! line and column — never a failure at the first call.
//!
//! Which capabilities a policy is checked for:
//! * declared on a capability: that capability (a policy scoped to another
//!   one, `resource == Capability::"other"`, can never apply: a problem);
//! * a runtime policy scoped to one capability: that one (a name the
//!   registry does not hold is a problem: the policy would never apply);
//! * any other runtime policy: every capability, since it applies to all.
//!   Schemas are shared between capabilities whose input types are equal,
//!   and a problem is reported once, naming the first capability it fails
//!   for.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::Capability;
use crate::meta::problem::{Problem, ProblemCode, Problems};
use crate::policy::cedar::{CedarProblem, CedarRule, Scope};
use crate::policy::{PolicyRule, PolicySpec};

pub(super) fn check(capabilities: &[Capability], runtime: &[PolicySpec], list: &mut Vec<Problem>) {
    let declared = |specs: &[PolicySpec]| specs.iter().any(|s| cedar(s).is_some());
    if !declared(runtime) && !capabilities.iter().any(|c| declared(&c.meta.policies)) {
        return; // no Cedar anywhere: nothing generated, nothing spent
    }
    let inputs = InputTypes::compute(capabilities);

    for (cap_index, cap) in capabilities.iter().enumerate() {
        let mut p = Problems {
            capability: Some(&cap.id),
            list,
        };
        for (i, rule) in cap.meta.policies.iter().enumerate().filter_map(cedar_at) {
            let path = format!("policies[{i}].cedar");
            for (id, scope) in rule.scopes() {
                if let Scope::Only(other) = scope
                    && other != cap.id
                {
                    p.push(
                        &path,
                        ProblemCode::InvalidPolicy,
                        format!(
                            "Cedar: policy `{id}` is scoped to capability `{other}` and can never apply to `{}`",
                            cap.id
                        ),
                    );
                }
            }
            for problem in rule.validate(inputs.of(cap_index), |_| true) {
                p.push(&path, ProblemCode::InvalidPolicy, problem.describe());
            }
        }
    }

    let mut p = Problems {
        capability: None,
        list,
    };
    let index: HashMap<&str, usize> = capabilities
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    for (i, rule) in runtime.iter().enumerate().filter_map(cedar_at) {
        let path = format!("policies[{i}].cedar");
        let mut reported = HashSet::new();
        let mut report = |p: &mut Problems, problem: CedarProblem, on: &str| {
            // One problem per place in the text, whichever capability
            // showed it first.
            let place = match problem.line {
                Some(_) => (problem.line, problem.column, String::new()),
                None => (None, None, problem.message.clone()),
            };
            if reported.insert(place) {
                let message = format!("for capability `{on}`: {}", problem.describe());
                p.push(&path, ProblemCode::InvalidPolicy, message);
            }
        };
        // Scoped policies: checked for the capability they name.
        for (id, scope) in rule.scopes() {
            let Scope::Only(name) = scope else {
                continue;
            };
            match index.get(name.as_str()) {
                None => p.push(
                    &path,
                    ProblemCode::InvalidPolicy,
                    format!(
                        "Cedar: policy `{id}` is scoped to capability `{name}`, which the registry does not hold"
                    ),
                ),
                Some(&c) => {
                    let only_this = |s: &Scope| *s == Scope::Only(name.clone());
                    for problem in rule.validate(inputs.of(c), only_this) {
                        report(&mut p, problem, &name);
                    }
                }
            }
        }
        // The rest apply to every capability: one check per distinct input
        // type (and one with no input when the registry is empty).
        if !rule.scopes().iter().any(|(_, s)| *s == Scope::Any) {
            continue;
        }
        let mut seen_types = HashSet::new();
        let mut targets: Vec<(Option<&Value>, &str)> = Vec::new();
        for (c, cap) in capabilities.iter().enumerate() {
            if seen_types.insert(inputs.key(c)) {
                targets.push((inputs.of(c), &cap.id));
            }
        }
        if targets.is_empty() {
            targets.push((None, "(none)"));
        }
        for (input, on) in targets {
            for problem in rule.validate(input, |s| *s == Scope::Any) {
                report(&mut p, problem, on);
            }
        }
    }
}

fn cedar(spec: &PolicySpec) -> Option<&CedarRule> {
    match &spec.rule {
        PolicyRule::Cedar(rule) => Some(rule),
        _ => None,
    }
}

fn cedar_at((i, spec): (usize, &PolicySpec)) -> Option<(usize, &CedarRule)> {
    cedar(spec).map(|rule| (i, rule))
}

/// Each capability's input as a Cedar type, computed once, and a key that
/// is equal for equal types (so schemas can be shared).
struct InputTypes {
    types: Vec<Option<Value>>,
    keys: Vec<usize>,
}

impl InputTypes {
    fn compute(capabilities: &[Capability]) -> InputTypes {
        let mut distinct: HashMap<String, usize> = HashMap::new();
        let mut types = Vec::with_capacity(capabilities.len());
        let mut keys = Vec::with_capacity(capabilities.len());
        for cap in capabilities {
            let t = Some(crate::policy::cedar_input_type(cap.input_schema.as_ref()));
            let next = distinct.len();
            let key = *distinct
                .entry(t.as_ref().map_or_else(String::new, Value::to_string))
                .or_insert(next);
            types.push(t);
            keys.push(key);
        }
        InputTypes { types, keys }
    }

    fn of(&self, capability: usize) -> Option<&Value> {
        self.types[capability].as_ref()
    }

    fn key(&self, capability: usize) -> usize {
        self.keys[capability]
    }
}
