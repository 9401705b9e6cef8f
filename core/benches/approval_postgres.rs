//! Approval lifecycle throughput on the shared stores (issue 8): one element
//! = build a request + `create` + `decide` (approve) + `consume`, with 1 and
//! 8 concurrent clients, on PostgreSQL (database clock, pooled, one store
//! shared by the clients' tasks) and on a SQLite file (WAL, `synchronous =
//! FULL`; each client its own connection on its own thread, as separate
//! processes would be). Criterion reports elements/s = lifecycles/s.
//!
//! Needs a server: `scripts/pg-test-cluster.sh run -- cargo bench -p
//! orpc-agent-core --features postgres --bench approval_postgres` (the
//! throwaway cluster keeps PostgreSQL's durable defaults: fsync on,
//! synchronous_commit on). Without `ORPC_AGENT_TEST_PG_URL` only SQLite runs.
// A bench must stop, not report a figure, when the store it measures fails.
#![allow(clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use orpc_agent_core::Surface;
use orpc_agent_core::approval::{
    ApprovalRequest, ApprovalStore, Decision, PgClock, PostgresApprovalStore, PostgresOptions,
    SqliteApprovalStore,
};
use orpc_agent_core::frame::Actor;
use serde_json::json;

const T0: u64 = 1_700_000_000_000;
const HASH: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

async fn lifecycle(store: &dyn ApprovalStore, client: usize) {
    let input = json!({"orderId": 42, "amount": 1500, "currency": "EUR", "note": "damaged"});
    let actor = Actor {
        id: Some(format!("agent-{client}")),
        ..Actor::default()
    };
    let req = ApprovalRequest::new(
        "orders.refund",
        input,
        HASH,
        Surface::Mcp,
        actor,
        Some("manager".into()),
        None,
        T0,
        900_000,
    );
    if let Err(e) = store.create(&req).await {
        panic!("create failed: {e:?}");
    }
    if let Err(e) = store
        .decide(
            &req.id,
            Decision::Approve,
            Some("manager-1"),
            None,
            T0 + 1,
            true,
        )
        .await
    {
        panic!("decide failed: {e:?}");
    }
    let used = store.consume(&req.id, T0 + 2).await;
    assert!(matches!(used, Ok(Ok(_))), "lifecycle failed: {used:?}");
}

/// Client `c`'s share of `iters` lifecycles, so the shares add up exactly.
fn share(iters: u64, clients: usize, c: usize) -> u64 {
    let (clients, c) = (clients as u64, c as u64);
    iters / clients + u64::from(c < iters % clients)
}

/// `iters` lifecycles split over `clients` tasks of one shared store.
fn timed_pg(
    rt: &tokio::runtime::Runtime,
    store: &Arc<PostgresApprovalStore>,
    clients: usize,
    iters: u64,
) -> Duration {
    rt.block_on(async {
        let start = Instant::now();
        let tasks: Vec<_> = (0..clients)
            .map(|c| {
                let store = store.clone();
                let n = share(iters, clients, c);
                tokio::spawn(async move {
                    for _ in 0..n {
                        lifecycle(store.as_ref(), c).await;
                    }
                })
            })
            .collect();
        for t in tasks {
            if let Err(e) = t.await {
                panic!("client task failed: {e}");
            }
        }
        start.elapsed()
    })
}

/// `iters` lifecycles split over `clients` threads, each with its own
/// SQLite connection on the same file.
fn timed_sqlite(stores: &[SqliteApprovalStore], iters: u64) -> Duration {
    let start = Instant::now();
    std::thread::scope(|s| {
        for (c, store) in stores.iter().enumerate() {
            let n = share(iters, stores.len(), c);
            s.spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread().build() {
                    Ok(rt) => rt,
                    Err(e) => panic!("no runtime: {e}"),
                };
                for _ in 0..n {
                    rt.block_on(lifecycle(store, c));
                }
            });
        }
    });
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return eprintln!("no tokio runtime: {e}"),
    };
    let mut g = c.benchmark_group("approval lifecycle, shared stores");
    g.throughput(Throughput::Elements(1));
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(4));

    match std::env::var("ORPC_AGENT_TEST_PG_URL") {
        Ok(url) => {
            let url = if url.contains('?') {
                format!("{url}&sslmode=disable")
            } else {
                format!("{url}?sslmode=disable")
            };
            let opts = PostgresOptions {
                max_connections: 8,
                clock: PgClock::Database,
                ..PostgresOptions::default()
            };
            let store = match rt.block_on(PostgresApprovalStore::connect_with(&url, opts)) {
                Ok(s) => Arc::new(s),
                Err(e) => panic!("cannot connect to {url}: {e}"),
            };
            for clients in [1, 8] {
                g.bench_function(format!("postgres, {clients} clients"), |b| {
                    b.iter_custom(|iters| timed_pg(&rt, &store, clients, iters))
                });
            }
        }
        Err(_) => eprintln!(
            "ORPC_AGENT_TEST_PG_URL is not set: PostgreSQL skipped \
             (scripts/pg-test-cluster.sh run -- cargo bench ...)"
        ),
    }

    let dir = std::env::temp_dir().join(format!("orpc-approval-pgbench-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return eprintln!("cannot create {}: {e}", dir.display());
    }
    let db = dir.join("approvals.db");
    for clients in [1, 8] {
        let stores: Vec<SqliteApprovalStore> = (0..clients)
            .map(|_| match SqliteApprovalStore::open(&db) {
                Ok(s) => s,
                Err(e) => panic!("cannot open {}: {e}", db.display()),
            })
            .collect();
        g.bench_function(format!("sqlite file, {clients} clients"), |b| {
            b.iter_custom(|iters| timed_sqlite(&stores, iters))
        });
    }
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
