//! Registry build + validation of 10 000 generated capabilities
//! (DESIGN §11 target: ≤ 20 ms, ≤ 2 µs per capability).

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use orpc_agent_core::{CapabilityDecl, CapabilityRegistry, RegistryOptions};
use serde_json::json;

/// A realistic mix: reads with retries, writes behind approval, externals
/// behind a declarative policy, some with overrides and redaction.
fn generated(n: usize) -> Vec<CapabilityDecl> {
    (0..n)
        .map(|i| {
            let meta = match i % 4 {
                0 => json!({"description": "Search orders by customer email or order number.",
                    "expose": {"aiSdk": true, "mcp": true, "direct": true},
                    "sideEffect": "read", "risk": "low", "tags": ["orders"],
                    "retry": {"maxAttempts": 2, "backoffMs": 100}}),
                1 => json!({"description": "Cancel an order that has not shipped.",
                    "expose": {"aiSdk": true}, "sideEffect": "destructive", "risk": "medium",
                    "approval": {"required": true, "type": "human-confirmation"}}),
                2 => json!({"description": "Refund an order.", "expose": {"mcp": true},
                    "sideEffect": "external", "risk": "high", "tags": ["billing"],
                    "policies": [{"name": "big", "when": {"input": ["/amount > 1000"]},
                                  "decision": "requireApproval", "approvalType": "manager"}],
                    "adapters": {"mcp": {"toolName": format!("refund.v{i}")}}}),
                _ => json!({"description": "Read a customer profile.", "expose": {"aiSdk": true},
                    "sideEffect": "read", "risk": "high", "redact": {"output": true},
                    "discovery": "contextual"}),
            };
            CapabilityDecl::new(format!("module{}.capability{i}", i % 100), meta)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let decls = generated(10_000);
    c.bench_function("registry build + validate, 10 000 capabilities", |b| {
        b.iter_batched(
            || decls.clone(),
            |d| {
                CapabilityRegistry::build(d, RegistryOptions::default())
                    .map(|r| r.capabilities().len())
            },
            BatchSize::LargeInput,
        )
    });
    let reg = CapabilityRegistry::build(decls.clone(), RegistryOptions::default());
    if let Ok(reg) = reg {
        c.bench_function("registry inspect, 10 000 capabilities", |b| {
            b.iter(|| reg.inspect().capabilities.len())
        });
        c.bench_function("resolve by tool name", |b| {
            b.iter(|| {
                reg.resolve(std::hint::black_box("module7_capability5007"))
                    .is_some()
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
