//! `cargo bench -p orpc-agent-core --bench act -- --warm-up-time 1 --measurement-time 3`
//!
//! DESIGN §11 targets: approval input hash of a 1 KB input ≤ 3 µs; decode +
//! validate a 10-key tool-definition map ≤ 1 µs.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use orpc_agent_core::act::input_hash;
use serde_json::{Value, json};

/// A realistic ~1 KB input: nested objects, arrays, text, integers, floats.
fn one_kb_input() -> Value {
    let items: Vec<Value> = (0..8)
        .map(|i| {
            json!({
                "sku": format!("SKU-{i:05}"),
                "qty": i + 1,
                "price": 19.99 + f64::from(i),
                "tags": ["gift", "fragile"],
            })
        })
        .collect();
    json!({
        "orderId": "ORD-2026-000123",
        "customer": {"id": "cus_8a7d6f", "email": "someone@example.com", "tier": "gold"},
        "items": items,
        "shipping": {"method": "express", "address": {"line1": "1 Main St", "city": "Springfield", "zip": "12345"}},
        "notes": "Leave at the door if nobody answers.",
        "total": 321.5,
    })
}

fn bench_hash(c: &mut Criterion) {
    let input = one_kb_input();
    let size = orpc_agent_core::act::hash_preimage("orders.create", &input)
        .map(|b| b.len())
        .unwrap_or(0);
    c.bench_function(&format!("input_hash/{size}B"), |b| {
        b.iter(|| input_hash(black_box("orders.create"), black_box(&input)))
    });
}

criterion_group!(benches, bench_hash);
criterion_main!(benches);
