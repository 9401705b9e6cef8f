//! The pipeline's own cost (DESIGN §11 target: one invocation through the
//! state machine with synchronous host answers ≤ 1 µs).
//!
//! * `machine/minimal`: host-held payloads, no validation, no policies, no
//!   audit — start, one RunHandler step, done.
//! * `machine/validated`: the same with host input and output validation
//!   (two more steps), what a binding with a schema pays.
//! * `machine/policies+audit`: a runtime declarative policy, a capability
//!   policy with an input predicate over a JSON input, and audit on (two
//!   records built and handed out).
//! * `driver/echo`: the tokio driver with a trivial async handler.
//! * `driver/approval-round-trip-sqlite`: gate + decide + resume on SQLite.
// A bench must stop, not report a figure, when what it measures fails.
#![allow(clippy::panic, clippy::unwrap_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use orpc_agent_core::approval::{
    BoxFuture, Decision as ApprovalDecision, MemoryApprovalStore, SqliteApprovalStore,
};
use orpc_agent_core::pipeline::driver::{Call, Driver, Handler, HandlerContext, HandlerError};
use orpc_agent_core::pipeline::{Answer, Invocation, InvokeOptions, Outcome, Payload, Step};
use orpc_agent_core::{Actor, CapabilityDecl, CapabilityRegistry, Frame, RegistryOptions, Surface};
use serde_json::{Value, json};

fn registry(meta: Value, validate: bool, options: Value) -> Arc<CapabilityRegistry> {
    let mut d = CapabilityDecl::new("orders.search", meta);
    d.validate_input = validate;
    d.validate_output = validate;
    let options = RegistryOptions::from_json(&options).unwrap();
    Arc::new(CapabilityRegistry::build(vec![d], options).unwrap())
}

fn plain_meta() -> Value {
    json!({"description": "Search orders.", "expose": {"mcp": true}, "sideEffect": "read",
           "risk": "low", "tags": ["orders"]})
}

/// Drives one invocation with immediate synchronous answers.
fn run_once(reg: &Arc<CapabilityRegistry>, input: Payload, opts: InvokeOptions) -> Outcome {
    let mut inv = Invocation::start(
        Arc::clone(reg),
        "orders.search",
        input,
        Frame::new(Surface::Mcp),
        opts,
    );
    loop {
        let answer = match inv.step() {
            Step::Done(_) => break,
            Step::ValidateInput { .. } => Answer::InputValid(Payload::Host),
            Step::RunHandler { .. } => Answer::HandlerOk {
                output: Payload::Host,
                now_ms: opts.now_ms,
            },
            Step::ValidateOutput { .. } => Answer::OutputValid(Payload::Host),
            Step::Audit(r) => {
                black_box(r);
                Answer::Audited
            }
            other => panic!("unexpected step {:?}", other.kind()),
        };
        if inv.answer(answer).is_err() {
            panic!("out of turn");
        }
    }
    match inv.take_outcome() {
        Some(o @ Outcome::Ok(_)) => o,
        other => panic!("{other:?}"),
    }
}

fn machine(c: &mut Criterion) {
    let mut g = c.benchmark_group("machine");
    let opts = InvokeOptions::at(1_700_000_000_000);

    let minimal = registry(plain_meta(), false, json!({}));
    g.bench_function("minimal", |b| {
        b.iter(|| black_box(run_once(&minimal, Payload::Host, opts)))
    });

    let validated = registry(plain_meta(), true, json!({}));
    g.bench_function("validated", |b| {
        b.iter(|| black_box(run_once(&validated, Payload::Host, opts)))
    });

    let mut meta = plain_meta();
    meta["policies"] = json!([{"name": "big", "when": {"input": ["/limit > 100"]},
                                "decision": "requireApproval"}]);
    let policed = registry(
        meta,
        false,
        json!({"policies": [{"name": "orders-ok", "when": {"tags": ["orders"]}, "decision": "allow"}]}),
    );
    let audit = InvokeOptions {
        audit: true,
        ..opts
    };
    let input = json!({"query": "alice@example.com", "limit": 10});
    g.bench_function("policies+audit", |b| {
        b.iter(|| black_box(run_once(&policed, Payload::Json(input.clone()), audit)))
    });
    g.finish();
}

struct Echo;

impl Handler for Echo {
    fn call<'a>(
        &'a self,
        input: &'a Value,
        _cx: HandlerContext<'a>,
    ) -> BoxFuture<'a, Result<Value, HandlerError>> {
        Box::pin(async move { Ok(input.clone()) })
    }
}

fn driver(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let reg = registry(plain_meta(), false, json!({}));
    let d = rt.block_on(async {
        Driver::builder(reg, Arc::new(MemoryApprovalStore::new()))
            .handler("orders.search", Arc::new(Echo))
            .build()
            .unwrap()
    });
    let input = json!({"query": "alice@example.com", "limit": 10});
    let frame = Frame::new(Surface::Mcp);
    c.benchmark_group("driver").bench_function("echo", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let o = d
                        .invoke("orders.search", input.clone(), Call::new(frame.clone()))
                        .await;
                    black_box(o);
                }
                start.elapsed()
            })
        })
    });
}

/// One approval round trip through the driver on a SQLite file: invoke
/// (gate, `create`), `decide`, resume (`consume`, handler). Every write is
/// an fsync (`synchronous = FULL`), so this measures the disk as much as
/// the code.
fn approval_round_trip(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("orpc-agent-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let store = SqliteApprovalStore::open(dir.join("approvals.db")).unwrap();
    let mut meta = plain_meta();
    meta["approval"] = json!({"required": true});
    let reg = registry(meta, false, json!({}));
    let d = rt.block_on(async {
        Driver::builder(reg, Arc::new(store))
            .handler("orders.search", Arc::new(Echo))
            .build()
            .unwrap()
    });
    let input = json!({"query": "alice@example.com", "limit": 10});
    let mut n = 0u64;
    c.benchmark_group("driver")
        .sample_size(20)
        .bench_function("approval-round-trip-sqlite", |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        // A distinct actor per round keeps the per-actor
                        // pending limit out of the measurement.
                        n += 1;
                        let frame = Frame::new(Surface::Mcp).with_actor(Actor {
                            id: Some(format!("agent-{n}")),
                            ..Actor::default()
                        });
                        let Outcome::ApprovalRequired(req) = d
                            .invoke("orders.search", input.clone(), Call::new(frame.clone()))
                            .await
                        else {
                            panic!("expected a gate");
                        };
                        d.decide(&req.id, ApprovalDecision::Approve, Some("mia"), None)
                            .await
                            .unwrap();
                        match d.resume(&req.id, Call::new(frame)).await {
                            Outcome::Ok(_) => {}
                            other => panic!("{other:?}"),
                        }
                    }
                    start.elapsed()
                })
            })
        });
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, machine, driver, approval_round_trip);
criterion_main!(benches);
