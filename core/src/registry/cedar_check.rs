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
//!
//! Building a Cedar schema costs 50–200 µs, so a schema is built once per
//! distinct input type *as the policy set sees it*: the input record cut to
//! the attributes the set names (a runtime set that reads `limit` is
//! checked once for all capabilities that agree on `limit`). A problem is
//! reported once per place in the text, naming the first capability it
//! fails for, with Cedar's message against that capability's whole input.

use std::collections::{HashMap, HashSet};

use cedar_policy::Validator;
use serde_json::Value;

use super::Capability;
use crate::meta::problem::{Problem, ProblemCode, Problems};
use crate::policy::cedar::{CedarProblem, CedarRule, Scope};
use crate::policy::{PolicyRule, PolicySpec};

pub(super) fn check(
    capabilities: &mut [Capability],
    runtime: &[PolicySpec],
    list: &mut Vec<Problem>,
) {
    let declared = |specs: &[PolicySpec]| specs.iter().any(|s| cedar(s).is_some());
    if !declared(runtime) && !capabilities.iter().any(|c| declared(&c.meta.policies)) {
        return; // no Cedar anywhere: nothing generated, nothing spent
    }
    // The type each capability's input is read through at run time: the
    // one checked against below (or untyped, for an empty record).
    for cap in capabilities.iter_mut() {
        cap.cedar_input = crate::policy::cedar_input_read_type(cap.policy_input_schema());
    }
    let capabilities = &*capabilities;
    let inputs: Vec<Value> = capabilities
        .iter()
        .map(|c| crate::policy::cedar_checked_input_type(c.cedar_input.as_ref()))
        .collect();
    let mut schemas = Schemas::default();

    for (cap, input) in capabilities.iter().zip(&inputs) {
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
            for problem in schemas.check(rule, input, |_| true) {
                // An untyped input is checked as an empty record, which
                // makes a guarded read look impossible; at run time it is not.
                if problem.never_applies && cap.cedar_input.is_none() {
                    continue;
                }
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
    let no_input = crate::policy::cedar_checked_input_type(None);
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
                    for problem in schemas.check(rule, &inputs[c], only_this) {
                        if !(problem.never_applies && capabilities[c].cedar_input.is_none()) {
                            report(&mut p, problem, &name);
                        }
                    }
                }
            }
        }
        // The rest apply to every capability (and, in an empty registry,
        // are still checked, against an input with nothing in it).
        if !rule.scopes().iter().any(|(_, s)| *s == Scope::Any) {
            continue;
        }
        let mut seen = HashSet::new();
        let targets = capabilities
            .iter()
            .map(|c| (c.id.as_str(), c.cedar_input.is_some()))
            .zip(&inputs)
            .chain(
                capabilities
                    .is_empty()
                    .then_some((("(none)", false), &no_input)),
            );
        // "Can never apply" counts only when it holds for every capability
        // (a runtime policy about `cents` rightly never applies to others),
        // and only for typed inputs (see above).
        let (mut checked, mut all_typed) = (0usize, true);
        let mut never: Vec<(CedarProblem, &str, usize)> = Vec::new();
        for ((on, typed), input) in targets {
            if !seen.insert((typed, rule.schema_key(&rule.input_seen(input)))) {
                continue;
            }
            checked += 1;
            all_typed &= typed;
            for problem in schemas.check(rule, input, |s| *s == Scope::Any) {
                if !problem.never_applies {
                    report(&mut p, problem, on);
                } else if let Some(n) = never
                    .iter_mut()
                    .find(|(q, _, _)| (q.line, q.column) == (problem.line, problem.column))
                {
                    n.2 += 1;
                } else {
                    never.push((problem, on, 1));
                }
            }
        }
        for (problem, on, count) in never {
            if all_typed && count == checked {
                report(&mut p, problem, on);
            }
        }
    }
}

/// Validators by schema key, built on first use.
#[derive(Default)]
struct Schemas {
    built: HashMap<String, Result<Validator, CedarProblem>>,
}

impl Schemas {
    /// The problems of `rule`'s policies that `keep` accepts, for a
    /// capability whose input has the Cedar type `input`.
    fn check(
        &mut self,
        rule: &CedarRule,
        input: &Value,
        keep: impl Fn(&Scope) -> bool,
    ) -> Vec<CedarProblem> {
        let seen = rule.input_seen(input);
        let validator = self
            .built
            .entry(rule.schema_key(&seen))
            .or_insert_with(|| rule.validator(&seen));
        match validator {
            Ok(v) if rule.validate_with(v, &keep).is_empty() => Vec::new(),
            Ok(_) => rule.explain(input, keep),
            Err(problem) => vec![problem.clone()],
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
