//! Cedar policies (issue 21, targets in BENCHMARKS.md), side by side in one
//! run and reported as ratios:
//!
//! * a governed call (the state machine, synchronous host answers, a JSON
//!   input) with a 20-policy Cedar set, against the same call with one
//!   declarative predicate policy;
//! * a registry of 1 000 capabilities, each with its own input schema: build
//!   time with the 20-policy set as a runtime policy (parse + type-check for
//!   every capability) against the same registry with one declarative
//!   runtime policy; and, with no target, each capability carrying its own
//!   Cedar policy against its own declarative one.
//!
//! Rounds alternate the two sides so drift on a shared machine falls on
//! both; each figure is the median round.
#![allow(clippy::panic, clippy::unwrap_used, clippy::print_stdout)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use orpc_agent_core::pipeline::{Answer, Invocation, InvokeOptions, Outcome, Payload, Step};
use orpc_agent_core::{Actor, CapabilityDecl, CapabilityRegistry, Frame, RegistryOptions, Surface};
use serde_json::{Value, json};

fn meta(policies: Value) -> Value {
    json!({"description": "Search orders.", "expose": {"mcp": true}, "sideEffect": "read",
           "risk": "low", "tags": ["orders"], "policies": policies})
}

fn input_schema() -> Value {
    json!({"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string"}, "limit": {"type": "integer"}, "region": {"type": "string"}}})
}

/// Twenty policies of the kinds teams write: roles, amounts, surfaces,
/// tags, the actor, forbids with exceptions.
fn cedar_set(capability: &str) -> String {
    let mut text = String::new();
    for i in 0..20 {
        let policy = match i % 5 {
            0 => format!(
                "@id(\"roles-{i}\") permit (principal, action in Action::\"invoke\", resource == Capability::\"{capability}\") when {{ principal.roles.contains(\"role-{i}\") }};"
            ),
            1 => format!(
                "@id(\"limit-{i}\") @requireApproval(\"ops\") permit (principal, action, resource) when {{ context.input has limit && context.input.limit > {} }};",
                1000 + i
            ),
            2 => format!(
                "@id(\"surface-{i}\") @reason(\"no\") forbid (principal, action == Action::\"workflow\", resource) when {{ resource.tags.contains(\"tag-{i}\") }};"
            ),
            3 => format!(
                "@id(\"region-{i}\") @reason(\"no\") forbid (principal, action, resource) when {{ context.input has region && context.input.region == \"r-{i}\" }} unless {{ principal.roles.contains(\"admin\") }};"
            ),
            _ => format!(
                "@id(\"risk-{i}\") @reason(\"no\") forbid (principal, action, resource) when {{ resource.risk == \"critical\" && principal.anonymous }};"
            ),
        };
        text.push_str(&policy);
        text.push('\n');
    }
    text
}

fn one_capability(policies: Value) -> Arc<CapabilityRegistry> {
    let mut d = CapabilityDecl::new("orders.search", meta(policies));
    d.input_schema = Some(input_schema());
    // The raw JSON input goes on (no host validation step to answer).
    d.validate_input = false;
    d.validate_output = false;
    Arc::new(CapabilityRegistry::build(vec![d], RegistryOptions::default()).unwrap())
}

fn run_once(reg: &Arc<CapabilityRegistry>, input: &Value, frame: &Frame) {
    let opts = InvokeOptions::at(1_796_635_800_000);
    let mut inv = Invocation::start(
        Arc::clone(reg),
        "orders.search",
        Payload::Json(input.clone()),
        frame.clone(),
        opts,
    );
    loop {
        let answer = match inv.step() {
            Step::Done(_) => break,
            Step::RunHandler { .. } => Answer::HandlerOk {
                output: Payload::Host,
                now_ms: opts.now_ms,
            },
            other => panic!("unexpected step {:?}", other.kind()),
        };
        inv.answer(answer).unwrap();
    }
    match inv.take_outcome() {
        Some(Outcome::Ok(_)) => {}
        other => panic!("{other:?}"),
    }
}

/// Median of `rounds` alternating timings of `a` and `b`, each round
/// `iters` runs; per run.
fn side_by_side(
    rounds: usize,
    iters: u32,
    mut a: impl FnMut(),
    mut b: impl FnMut(),
) -> (Duration, Duration) {
    let mut ta = Vec::with_capacity(rounds);
    let mut tb = Vec::with_capacity(rounds);
    for _ in 0..iters {
        a();
        b();
    }
    for _ in 0..rounds {
        let start = Instant::now();
        for _ in 0..iters {
            a();
        }
        ta.push(start.elapsed() / iters);
        let start = Instant::now();
        for _ in 0..iters {
            b();
        }
        tb.push(start.elapsed() / iters);
    }
    ta.sort();
    tb.sort();
    (ta[rounds / 2], tb[rounds / 2])
}

fn governed_call() {
    let declarative = one_capability(json!([{"name": "big", "when": {"input": ["/limit > 1000"]},
                                             "decision": "requireApproval"}]));
    let cedar = one_capability(json!([{"name": "rules", "cedar": cedar_set("orders.search")}]));
    let input = json!({"query": "alice@example.com", "limit": 10, "region": "eu"});
    let frame = Frame::new(Surface::Mcp).with_actor(Actor {
        id: Some("ann".into()),
        roles: vec!["role-5".into(), "support".into()],
        attributes: serde_json::Map::new(),
    });
    let (d, c) = side_by_side(
        31,
        2_000,
        || run_once(&declarative, &input, &frame),
        || run_once(&cedar, &input, &frame),
    );
    println!(
        "governed call, 1 declarative predicate   {:>9.2?}\ngoverned call, 20-policy Cedar set       {:>9.2?}   ratio {:.2}x (target <= 1.5x)",
        d,
        c,
        c.as_secs_f64() / d.as_secs_f64()
    );
}

/// 1 000 capabilities, each with its own input schema. `own`: each also
/// has a policy reading its input (Cedar or declarative); `runtime`: the
/// 20-policy Cedar set, or one declarative policy, over all of them.
fn thousand_capabilities(own_cedar: Option<bool>, runtime_cedar: bool) -> (Vec<CedarDecl>, Value) {
    let decls = (0..1000)
        .map(|i| {
            let policies = match own_cedar {
                None => json!([]),
                Some(true) => json!([{"cedar": format!(
                    "@id(\"own-{i}\") permit (principal, action, resource) when {{ context.input.field{i} > {i} && principal.roles.contains(\"r{i}\") }};"
                )}]),
                Some(false) => json!([{"when": {"input": [format!("/field{i} > {i}")]}, "decision": "allow"}]),
            };
            let mut d = CapabilityDecl::new(format!("cap{i}.run"), meta(policies));
            d.input_schema = Some(json!({"type": "object", "required": [format!("field{i}")],
                "properties": {format!("field{i}"): {"type": "integer"}, "limit": {"type": "integer"},
                               "region": {"type": "string"}}}));
            d
        })
        .collect();
    let runtime = if runtime_cedar {
        json!({"policies": [{"cedar": cedar_set("cap0.run")}]})
    } else {
        json!({"policies": [{"when": {"tags": ["orders"]}, "decision": "allow"}]})
    };
    (decls, runtime)
}

type CedarDecl = CapabilityDecl;

/// Median build time of the registry `make` describes, over 11 rounds
/// alternating with `peer`.
fn builds(
    make: impl Fn() -> (Vec<CedarDecl>, Value),
    peer: impl Fn() -> (Vec<CedarDecl>, Value),
) -> (Duration, Duration) {
    let time = |(decls, options): (Vec<CedarDecl>, Value)| {
        let start = Instant::now();
        black_box(CapabilityRegistry::build_with_json_options(decls, &options).unwrap());
        start.elapsed()
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..11 {
        b.push(time(peer()));
        a.push(time(make()));
    }
    a.sort();
    b.sort();
    (a[5], b[5])
}

fn registry_build() {
    let (c, d) = builds(
        || thousand_capabilities(None, true),
        || thousand_capabilities(None, false),
    );
    println!(
        "1000 capabilities + 1 declarative policy  {:>9.2?}\n1000 capabilities + 20-policy Cedar set   {:>9.2?}   set parse + type-check {:.2?} (target <= 50 ms)",
        d,
        c,
        c.saturating_sub(d)
    );
    let (c, d) = builds(
        || thousand_capabilities(Some(true), false),
        || thousand_capabilities(Some(false), false),
    );
    println!(
        "1000 capabilities, own declarative policy {:>9.2?}\n1000 capabilities, own Cedar policy       {:>9.2?}   1000 parses + type-checks {:.2?} (no target)",
        d,
        c,
        c.saturating_sub(d)
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs once.
    if std::env::args().any(|a| a == "--bench") {
        governed_call();
        registry_build();
    } else {
        let (decls, options) = thousand_capabilities(Some(true), true);
        CapabilityRegistry::build_with_json_options(decls, &options).unwrap();
        run_once(
            &one_capability(json!([{"cedar": cedar_set("orders.search")}])),
            &json!({"query": "q"}),
            &Frame::new(Surface::Mcp),
        );
    }
}
