//! `cargo bench -p orpc-agent-core --bench act -- --warm-up-time 1 --measurement-time 3`
//!
//! DESIGN §11 targets: approval input hash of a 1 KB input ≤ 3 µs; decode +
//! validate a 10-key tool-definition map ≤ 1 µs.

use std::hint::black_box;

use ciborium::Value as Cbor;
use criterion::{Criterion, criterion_group, criterion_main};
use orpc_agent_core::act::{MetaMap, MetaView, Position, ValidateOptions, input_hash};
use serde_json::{Value, json};

/// A realistic ~1 KB input: nested objects, arrays, text, integers, floats.
fn one_kb_input() -> Value {
    let items: Vec<Value> = (0..15)
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

/// A 10-key tool-definition map like a component publishes: hints, a
/// localized usage hint, tags, one example, a foreign key, a traceparent.
fn ten_key_map() -> Vec<u8> {
    let text = |s: &str| Cbor::Text(s.into());
    let example = MetaMap::from_entries([
        ("query".to_owned(), text("shoes")),
        ("limit".to_owned(), Cbor::Integer(5.into())),
    ])
    .encode()
    .unwrap_or_default();
    MetaMap::from_entries([
        ("std:read-only".to_owned(), Cbor::Bool(true)),
        ("std:idempotent".to_owned(), Cbor::Bool(true)),
        ("std:destructive".to_owned(), Cbor::Bool(false)),
        ("std:timeout-ms".to_owned(), Cbor::Integer(5000.into())),
        (
            "std:usage-hints".to_owned(),
            Cbor::Map(vec![
                (text("en"), text("Search orders")),
                (text("de"), text("Bestellungen suchen")),
            ]),
        ),
        ("std:anti-usage-hints".to_owned(), text("Not for refunds")),
        (
            "std:examples".to_owned(),
            Cbor::Array(vec![Cbor::Bytes(example)]),
        ),
        (
            "std:tags".to_owned(),
            Cbor::Array(vec![text("orders"), text("search")]),
        ),
        ("acme:priority".to_owned(), Cbor::Integer(3.into())),
        (
            "std:traceparent".to_owned(),
            text("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        ),
    ])
    .encode()
    .unwrap_or_default()
}

fn bench_meta(c: &mut Criterion) {
    let bytes = ten_key_map();
    // What a host does with metadata it receives: check it in place.
    c.bench_function(
        &format!("meta_view_decode_validate/10_keys/{}B", bytes.len()),
        |b| {
            b.iter(|| {
                MetaView::parse(black_box(&bytes)).map(|v| {
                    v.validate(Position::ToolDefinition, ValidateOptions::default())
                        .len()
                })
            })
        },
    );
    // The owning path: ciborium values for typed getters, then validation.
    c.bench_function("meta_map_decode_validate/10_keys", |b| {
        b.iter(|| {
            MetaMap::decode(black_box(&bytes)).map(|m| {
                m.validate(Position::ToolDefinition, ValidateOptions::default())
                    .len()
            })
        })
    });
    c.bench_function("meta_view_parse/10_keys", |b| {
        b.iter(|| MetaView::parse(black_box(&bytes)).map(|v| v.len()))
    });
    if let Ok(view) = MetaView::parse(&bytes) {
        c.bench_function("meta_view_validate/10_keys", |b| {
            b.iter(|| {
                black_box(&view)
                    .validate(Position::ToolDefinition, ValidateOptions::default())
                    .len()
            })
        });
    }
    c.bench_function("meta_map_decode/10_keys", |b| {
        b.iter(|| MetaMap::decode(black_box(&bytes)).ok())
    });
}

criterion_group!(benches, bench_hash, bench_meta);
criterion_main!(benches);
