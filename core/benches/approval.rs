//! Approval lifecycle throughput (issue 4, item 10): one element = build a
//! request (fresh random id) + `create` + `decide` (approve) + `consume`,
//! on the memory store and on a SQLite file (WAL, `synchronous = FULL`, so
//! every write is an fsync). Criterion reports elements/s = lifecycles/s;
//! store operations/s are three times that.
// A bench must stop, not report a figure, when the store it measures fails.
#![allow(clippy::panic)]

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use orpc_agent_core::Surface;
use orpc_agent_core::approval::{
    ApprovalRequest, ApprovalStore, Decision, MemoryApprovalStore, SqliteApprovalStore,
};
use orpc_agent_core::frame::Actor;
use serde_json::json;

const T0: u64 = 1_700_000_000_000;
const HASH: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

fn lifecycle(rt: &tokio::runtime::Runtime, store: &dyn ApprovalStore, input: &serde_json::Value) {
    let actor = Actor {
        id: Some("agent-7".into()),
        ..Actor::default()
    };
    let req = ApprovalRequest::new(
        "orders.refund",
        input.clone(),
        HASH,
        Surface::Mcp,
        actor,
        Some("manager".into()),
        None,
        T0,
        900_000,
    );
    rt.block_on(async {
        store.create(&req).await.ok();
        store
            .decide(
                &req.id,
                Decision::Approve,
                Some("manager-1"),
                None,
                T0 + 1,
                true,
            )
            .await
            .ok();
        let used = store.consume(&req.id, T0 + 2).await;
        assert!(matches!(used, Ok(Ok(_))), "lifecycle failed: {used:?}");
    });
}

/// Runs `iters` lifecycles on a store made fresh for each sample, so the
/// memory store does not grow across the whole run.
fn timed(
    rt: &tokio::runtime::Runtime,
    iters: u64,
    make: &dyn Fn() -> Box<dyn ApprovalStore>,
) -> Duration {
    let input = json!({"orderId": 42, "amount": 1500, "currency": "EUR", "note": "damaged"});
    let store = make();
    let start = Instant::now();
    for _ in 0..iters {
        lifecycle(rt, store.as_ref(), &input);
    }
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let rt = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => return eprintln!("no tokio runtime: {e}"),
    };
    let dir = std::env::temp_dir().join(format!("orpc-approval-bench-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return eprintln!("cannot create {}: {e}", dir.display());
    }
    let db = dir.join("approvals.db");

    let mut g = c.benchmark_group("approval create+decide+consume");
    g.throughput(Throughput::Elements(1));
    g.bench_function("memory", |b| {
        b.iter_custom(|iters| timed(&rt, iters, &|| Box::new(MemoryApprovalStore::new())))
    });
    g.bench_function("sqlite file", |b| {
        b.iter_custom(|iters| {
            timed(&rt, iters, &|| match SqliteApprovalStore::open(&db) {
                Ok(s) => Box::new(s),
                Err(e) => panic!("cannot open {}: {e}", db.display()),
            })
        })
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
