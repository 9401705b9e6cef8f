#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The PostgreSQL approval store and audit sink against a real server
//! (issue 8).
//!
//! Every test here is `#[ignore]`d: a plain `cargo test` lists them as
//! ignored with the reason, and `make test-postgres` runs them with
//! `--ignored` against a throwaway cluster that `scripts/pg-test-cluster.sh`
//! installs, starts and stops. Run with `--ignored` but without
//! `ORPC_AGENT_TEST_PG_URL`, they FAIL with instructions instead of passing
//! silently.
//!
//! Each test gets its own database, so they run in parallel; the test that
//! restarts the server takes [`pg::CLUSTER`] exclusively.

#[cfg(not(feature = "postgres"))]
#[test]
#[ignore = "needs PostgreSQL: make test-postgres"]
fn postgres_feature_is_off() {
    panic!(
        "the PostgreSQL tests need the core's `postgres` feature: run `make test-postgres` \
         (scripts/pg-test-cluster.sh run -- cargo test -p orpc-agent-core --features postgres \
         --test approval_postgres -- --ignored)"
    );
}

#[cfg(feature = "postgres")]
#[path = "support/approval_suite.rs"]
mod suite;

#[cfg(feature = "postgres")]
mod pg {
    use std::path::Path;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use orpc_agent_core::approval::{
        ApprovalRequest, ApprovalStatus, ApprovalStore, BackendErrorKind, ConsumeRefusal, Decision,
        ListFilter, PG_SCHEMA_VERSION, PgClock, PostgresApprovalStore, PostgresOptions,
        PostgresTls, StoreError,
    };
    use orpc_agent_core::error::ErrorCode;
    use orpc_agent_core::pipeline::audit_postgres::PostgresAuditSink;
    use orpc_agent_core::pipeline::driver::AuditSink;
    use orpc_agent_core::pipeline::{AuditEvent, AuditRecord, Stage};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_postgres::NoTls;

    use super::suite::*;

    pub const URL_ENV: &str = "ORPC_AGENT_TEST_PG_URL";
    const HOW: &str = "run `make test-postgres` (it installs and starts a throwaway PostgreSQL: \
        scripts/pg-test-cluster.sh run -- cargo test -p orpc-agent-core --features postgres \
        --test approval_postgres -- --ignored)";

    /// Held shared by every test, exclusively by the one that restarts the
    /// server, so no other test sees the restart.
    pub static CLUSTER: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

    /// The cluster's URL, without its database name and parameters:
    /// `postgresql://user@host:port`.
    fn server() -> String {
        let url = std::env::var(URL_ENV).unwrap_or_else(|_| panic!("{URL_ENV} is not set: {HOW}"));
        let url = url.split('?').next().unwrap();
        let (server, _db) = url.rsplit_once('/').unwrap();
        server.to_owned()
    }

    /// A URL for database `db`; plaintext unless `params` says otherwise.
    fn url_for(db: &str, params: &str) -> String {
        let params = if params.is_empty() {
            "sslmode=disable".to_owned()
        } else {
            params.to_owned()
        };
        format!("{}/{db}?{params}", server())
    }

    async fn admin(db: &str) -> tokio_postgres::Client {
        let (client, conn) = tokio_postgres::connect(&url_for(db, ""), NoTls)
            .await
            .unwrap_or_else(|e| panic!("cannot reach the test PostgreSQL ({e}): {HOW}"));
        tokio::spawn(conn);
        client
    }

    /// A new, empty database for one test.
    async fn fresh_db(tag: &str) -> String {
        static N: AtomicU32 = AtomicU32::new(0);
        let db = format!(
            "t_{tag}_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        admin("postgres")
            .await
            .batch_execute(&format!("CREATE DATABASE {db}"))
            .await
            .unwrap();
        db
    }

    fn options(clock: PgClock) -> PostgresOptions {
        PostgresOptions {
            clock,
            connect_timeout: Duration::from_secs(5),
            ..PostgresOptions::default()
        }
    }

    async fn store_on(db: &str, clock: PgClock) -> PostgresApprovalStore {
        PostgresApprovalStore::connect_with(&url_for(db, ""), options(clock))
            .await
            .unwrap()
    }

    /// `$check(&dyn ApprovalStore)` from the shared suite, on a fresh
    /// database, with the caller's clock (the suite pins its times).
    macro_rules! on_postgres {
        ($($check:ident),+ $(,)?) => {$(
            #[tokio::test]
            #[ignore = "needs PostgreSQL: make test-postgres"]
            async fn $check() {
                let _shared = CLUSTER.read().await;
                let db = fresh_db(stringify!($check)).await;
                let store = store_on(&db, PgClock::Caller).await;
                super::suite::$check(&store).await;
            }
        )+};
    }

    on_postgres!(
        create_then_get_returns_the_same_request,
        create_refuses_malformed_and_duplicate_requests,
        list_filters_orders_and_pages,
        list_keeps_creation_order_within_a_millisecond,
        decide_approves_and_rejects,
        decide_twice_is_refused,
        decision_fields_are_the_same_in_every_store,
        approver_must_differ_from_actor,
        expiry_boundary_is_exclusive,
        consume_exactly_once,
        consume_refusals_have_distinct_codes,
        pending_limit_per_actor_default,
        list_filters_by_effective_status,
        a_repeated_call_finds_its_request,
        a_repeated_call_finds_its_request_behind_other_callers,
    );

    #[tokio::test]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn pending_limit_counts_only_live_pending_postgres() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("limit").await;
        let opts = PostgresOptions {
            max_pending_per_actor: 3,
            ..options(PgClock::Caller)
        };
        let store = PostgresApprovalStore::connect_with(&url_for(&db, ""), opts)
            .await
            .unwrap();
        pending_limit_counts_only_live_pending(&store, 3).await;
    }

    /// Concurrent creators cannot overrun the per-actor limit: the advisory
    /// lock serialises them per actor.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn pending_limit_holds_under_concurrent_creates() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("limitrace").await;
        let opts = PostgresOptions {
            max_pending_per_actor: 5,
            ..options(PgClock::Database)
        };
        let store = Arc::new(
            PostgresApprovalStore::connect_with(&url_for(&db, ""), opts)
                .await
                .unwrap(),
        );
        let tasks: Vec<_> = (0..40)
            .map(|_| {
                let store = store.clone();
                tokio::spawn(async move { store.create(&request(Some("eve"))).await })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(()) => ok += 1,
                Err(e) => assert!(matches!(e, StoreError::LimitExceeded { limit: 5 }), "{e:?}"),
            }
        }
        assert_eq!(ok, 5);
    }

    // ------------------------------------------------------------ clock

    async fn db_now_ms(db: &str) -> u64 {
        let row = admin(db)
            .await
            .query_one("SELECT floor(extract(epoch from now()) * 1000)::int8", &[])
            .await
            .unwrap();
        u64::try_from(row.get::<_, i64>(0)).unwrap()
    }

    /// Expiry follows the database's clock: an instance whose clock is
    /// years off neither expires requests early nor keeps them alive late.
    #[tokio::test]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn expiry_uses_the_database_clock() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("clock").await;
        let store = store_on(&db, PgClock::Database).await;

        // An instance whose clock reads 2023 (T0) asks for a one-hour approval.
        let before = db_now_ms(&db).await;
        let req = created(&store, request_at("orders.refund", Some("alice"), T0, HOUR)).await;
        let after = db_now_ms(&db).await;
        let stored = store.get(&req.id).await.unwrap().unwrap();
        assert!(
            (before..=after).contains(&stored.created_at_ms),
            "created_at is the database's now ({before}..={after}), not the caller's: {}",
            stored.created_at_ms
        );
        assert_eq!(
            stored.expires_at_ms - stored.created_at_ms,
            HOUR,
            "the lifetime is kept"
        );
        // By the caller's clock the request expired long ago (T0 + 2h):
        // the database's clock says otherwise, and wins.
        let approved = store
            .decide(
                &req.id,
                Decision::Approve,
                Some("m"),
                None,
                T0 + 2 * HOUR,
                false,
            )
            .await
            .unwrap();
        assert!(approved.decided_at_ms.unwrap() >= stored.created_at_ms);
        assert!(approved.decided_at_ms.unwrap() < T0 + HOUR * 24 * 365 * 100);
        let used = store.consume(&req.id, u64::MAX).await.unwrap().unwrap();
        assert_eq!(used.status, ApprovalStatus::Consumed);

        // A request past its expiry by the database's clock (set there, no
        // real-time wait a loaded machine could outlast): the caller's
        // clock (stuck at T0) would keep it alive forever; the database's
        // expires it, for a consume and for a decision.
        let expire = |id: String| {
            let db = db.clone();
            async move {
                admin(&db)
                    .await
                    .execute(
                        "UPDATE orpc_approvals SET expires_at = now() - interval '1 millisecond' \
                         WHERE id = $1",
                        &[&id],
                    )
                    .await
                    .unwrap();
            }
        };
        let short = created(&store, request_at("orders.refund", Some("alice"), T0, HOUR)).await;
        store
            .decide(&short.id, Decision::Approve, Some("m"), None, T0, false)
            .await
            .unwrap();
        expire(short.id.clone()).await;
        assert_eq!(
            store.consume(&short.id, T0).await.unwrap(),
            Err(ConsumeRefusal::Expired)
        );
        let pending = created(&store, request_at("orders.refund", Some("alice"), T0, HOUR)).await;
        expire(pending.id.clone()).await;
        let err = store
            .decide(&pending.id, Decision::Approve, Some("m"), None, T0, false)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            StoreError::Expired {
                id: pending.id.clone()
            }
        );

        // And the stored expiry is a timestamptz an operator can compare.
        let expired: bool = admin(&db)
            .await
            .query_one(
                "SELECT expires_at <= now() FROM orpc_approvals WHERE id = $1",
                &[&short.id],
            )
            .await
            .unwrap()
            .get(0);
        assert!(expired);
    }

    // ------------------------------------------------- several processes

    const CHILD_ENV: &str = "ORPC_PG_CHILD";

    /// Re-runs this test executable as a child running `test` with
    /// `CHILD_ENV=spec`, returning its stdout (after asserting success).
    fn spawn_child(test: &str, spec: &str) -> std::process::Child {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                test,
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, spec)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn child_line(child: std::process::Child, tag: &str) -> String {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "child failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
            .lines()
            .find_map(|l| l.split_once(tag).map(|(_, rest)| rest.trim().to_owned()))
            .unwrap_or_else(|| panic!("no {tag} line in child output: {stdout}"))
    }

    /// One process creates, a second approves, a third resumes (consumes):
    /// three instances sharing one queue through the database only.
    #[test]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    fn create_approve_consume_in_three_processes() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        if let Ok(spec) = std::env::var(CHILD_ENV) {
            return rt.block_on(three_process_child(&spec));
        }
        let _shared = rt.block_on(CLUSTER.read());
        let db = rt.block_on(fresh_db("three"));
        let test = "pg::create_approve_consume_in_three_processes";
        let id = child_line(spawn_child(test, &format!("create|{db}")), "CREATED ");
        let decided = child_line(
            spawn_child(test, &format!("approve|{db}|{id}")),
            "APPROVED ",
        );
        assert_eq!(decided, "manager-2");
        let used = child_line(
            spawn_child(test, &format!("consume|{db}|{id}")),
            "CONSUMED ",
        );
        assert_eq!(used, "ok mcp alice");
        // A fourth instance cannot use it again.
        let again = child_line(
            spawn_child(test, &format!("consume|{db}|{id}")),
            "CONSUMED ",
        );
        assert_eq!(again, "refused AlreadyConsumed");
        let store = rt.block_on(store_on(&db, PgClock::Database));
        let row = rt.block_on(store.get(&id)).unwrap().unwrap();
        assert_eq!(row.status, ApprovalStatus::Consumed);
        assert_eq!(row.decided_by.as_deref(), Some("manager-2"));
    }

    async fn three_process_child(spec: &str) {
        let parts: Vec<&str> = spec.split('|').collect();
        let store = store_on(parts[1], PgClock::Database).await;
        match parts[0] {
            "create" => {
                let req = created(&store, request(Some("alice"))).await;
                println!("CREATED {}", req.id);
            }
            "approve" => {
                let r = store
                    .decide(
                        parts[2],
                        Decision::Approve,
                        Some("manager-2"),
                        None,
                        0,
                        true,
                    )
                    .await
                    .unwrap();
                println!("APPROVED {}", r.decided_by.unwrap());
            }
            "consume" => match store.consume(parts[2], 0).await.unwrap() {
                Ok(r) => println!(
                    "CONSUMED ok {} {}",
                    r.surface.as_str(),
                    r.actor.id.unwrap_or_default()
                ),
                Err(refusal) => println!("CONSUMED refused {refusal:?}"),
            },
            other => panic!("unknown child role {other}"),
        }
    }

    /// 50 concurrent consumes of one approved request from 5 OS processes
    /// (10 tasks each, each process its own pool): exactly one succeeds and
    /// the other 49 are each told "already consumed". Three rounds.
    #[test]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    fn fifty_consumes_from_five_processes_succeed_once() {
        let rt = tokio::runtime::Runtime::new().unwrap();
        if let Ok(spec) = std::env::var(CHILD_ENV) {
            return rt.block_on(race_child(&spec));
        }
        let _shared = rt.block_on(CLUSTER.read());
        let db = rt.block_on(fresh_db("race"));
        let store = rt.block_on(store_on(&db, PgClock::Database));
        let dir = std::env::temp_dir().join(format!("orpc-pg-race-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for round in 0..3 {
            let req = rt.block_on(async {
                let req = created(&store, request(Some("alice"))).await;
                store
                    .decide(&req.id, Decision::Approve, Some("m"), None, 0, false)
                    .await
                    .unwrap()
            });
            let go = dir.join(format!("go-{round}"));
            let children: Vec<_> = (0..5)
                .map(|_| {
                    spawn_child(
                        "pg::fifty_consumes_from_five_processes_succeed_once",
                        &format!("{db}|{}|{}", req.id, go.display()),
                    )
                })
                .collect();
            std::thread::sleep(Duration::from_millis(500));
            std::fs::write(&go, b"go").unwrap();
            let (mut ok, mut consumed) = (0, 0);
            for child in children {
                let line = child_line(child, "RACE ");
                let (o, c) = line.split_once(' ').unwrap();
                ok += o.parse::<usize>().unwrap();
                consumed += c.parse::<usize>().unwrap();
            }
            assert_eq!((ok, consumed), (1, 49), "round {round}");
            let stored = rt.block_on(store.get(&req.id)).unwrap().unwrap();
            assert_eq!(stored.status, ApprovalStatus::Consumed);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    async fn race_child(spec: &str) {
        let parts: Vec<&str> = spec.split('|').collect();
        let (db, id, go) = (parts[0], parts[1].to_owned(), parts[2]);
        let opts = PostgresOptions {
            max_connections: 10,
            ..options(PgClock::Database)
        };
        let store = Arc::new(
            PostgresApprovalStore::connect_with(&url_for(db, ""), opts)
                .await
                .unwrap(),
        );
        // Open the ten connections before the start line, so the race is
        // between statements, not connection set-ups.
        let warm: Vec<_> = (0..10)
            .map(|_| {
                let s = store.clone();
                tokio::spawn(async move { s.get("apr_00000000000000000000000000000000").await })
            })
            .collect();
        for w in warm {
            w.await.unwrap().unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while !Path::new(go).exists() {
            assert!(Instant::now() < deadline, "no go signal");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let tasks: Vec<_> = (0..10)
            .map(|_| {
                let (s, id) = (store.clone(), id.clone());
                tokio::spawn(async move { s.consume(&id, 0).await })
            })
            .collect();
        let (mut ok, mut consumed) = (0, 0);
        for t in tasks {
            match t.await.unwrap().unwrap() {
                Ok(_) => ok += 1,
                Err(ConsumeRefusal::AlreadyConsumed) => consumed += 1,
                Err(other) => panic!("unexpected refusal {other:?}"),
            }
        }
        println!("RACE {ok} {consumed}");
    }

    /// 20 concurrent approve/reject decisions through 4 stores (4 pools):
    /// exactly one wins, the others learn what won, the row holds the
    /// winner.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn concurrent_decisions_one_wins() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("decide").await;
        let mut stores = Vec::new();
        for _ in 0..4 {
            stores.push(Arc::new(store_on(&db, PgClock::Database).await));
        }
        for round in 0..3 {
            let req = created(stores[0].as_ref(), request(Some("alice"))).await;
            let start = Arc::new(tokio::sync::Barrier::new(20));
            let tasks: Vec<_> = (0..20)
                .map(|i| {
                    let (store, start, id) = (stores[i % 4].clone(), start.clone(), req.id.clone());
                    tokio::spawn(async move {
                        let d = if i % 2 == 0 {
                            Decision::Approve
                        } else {
                            Decision::Reject
                        };
                        let who = format!("m{i}");
                        start.wait().await;
                        store.decide(&id, d, Some(&who), None, 0, false).await
                    })
                })
                .collect();
            let mut results = Vec::new();
            for t in tasks {
                results.push(t.await.unwrap());
            }
            let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
            assert_eq!(winners.len(), 1, "round {round}");
            let stored = stores[1].get(&req.id).await.unwrap().unwrap();
            assert_eq!(
                &stored, winners[0],
                "the stored decision is the one reported as won"
            );
            for r in &results {
                if let Err(e) = r {
                    assert_eq!(
                        *e,
                        StoreError::AlreadyDecided {
                            id: req.id.clone(),
                            status: stored.status
                        }
                    );
                }
            }
        }
    }

    // --------------------------------------------- restarts and drops

    /// The server stops like a crash (immediate shutdown, no checkpoint)
    /// between approve and consume: nothing committed is lost, and the same
    /// store (its pooled connections now dead) recovers by itself.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn server_restart_between_approve_and_consume_loses_nothing() {
        let script = std::env::var("ORPC_AGENT_TEST_PG_CLUSTER").unwrap_or_else(|_| {
            panic!("ORPC_AGENT_TEST_PG_CLUSTER (the cluster script) is not set: {HOW}")
        });
        let _exclusive = CLUSTER.write().await;
        let db = fresh_db("restart").await;
        let store = store_on(&db, PgClock::Database).await;
        let waiting = created(&store, request(Some("alice"))).await;
        let req = created(&store, request(Some("alice"))).await;
        let approved = store
            .decide(&req.id, Decision::Approve, Some("m"), Some("ok"), 0, false)
            .await
            .unwrap();
        // Restart in the background and try to resume while the server is
        // down: either the store's retries outlast the outage and this is
        // the one success, or it ends in a typed backend error that
        // consumed nothing.
        let mut restart = tokio::process::Command::new(&script)
            .arg("restart")
            .spawn()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let during = store.consume(&req.id, 0).await;
        assert!(
            restart.wait().await.unwrap().success(),
            "{script} restart failed"
        );
        let after = store.consume(&req.id, 0).await.unwrap();
        let used = match during {
            Ok(Ok(used)) => {
                eprintln!("restart: the retries outlasted the outage");
                assert_eq!(after, Err(ConsumeRefusal::AlreadyConsumed));
                used
            }
            Err(e) => {
                eprintln!("restart: typed error during the outage: {e:?}");
                assert!(e.is_backend(), "{e:?}");
                after.expect("the outage consumed nothing")
            }
            Ok(Err(refusal)) => panic!("refused during the restart: {refusal:?}"),
        };
        let mut want = approved.clone();
        want.status = ApprovalStatus::Consumed;
        assert_eq!(used, want, "the approval survived with its decision");
        let still = store.get(&waiting.id).await.unwrap().unwrap();
        assert_eq!(still.status, ApprovalStatus::Pending);
        assert_eq!(store.list(&ListFilter::default()).await.unwrap().len(), 2);
        assert_eq!(
            store.consume(&req.id, 0).await.unwrap(),
            Err(ConsumeRefusal::AlreadyConsumed)
        );
    }

    async fn backend_pids(db: &str, app: &str) -> Vec<i32> {
        admin(db)
            .await
            .query(
                "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
                &[&app],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    }

    /// A consume's connection is killed (`pg_terminate_backend`) while its
    /// UPDATE waits on the row: the store retries on a fresh connection and
    /// the request is consumed exactly once, by this call.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn connection_killed_mid_consume_consumes_once() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("kill").await;
        let store = store_on(&db, PgClock::Database).await;
        let req = approved(&store, Some("alice")).await;
        let victim = PostgresApprovalStore::connect_with(
            &url_for(&db, "sslmode=disable&application_name=victim"),
            options(PgClock::Database),
        )
        .await
        .unwrap();

        // Hold the row so the victim's UPDATE blocks mid-statement.
        let mut locker = admin(&db).await;
        let tx = locker.transaction().await.unwrap();
        tx.execute(
            "SELECT 1 FROM orpc_approvals WHERE id = $1 FOR UPDATE",
            &[&req.id],
        )
        .await
        .unwrap();
        let id = req.id.clone();
        let consuming = tokio::spawn(async move { victim.consume(&id, 0).await });
        let mut waiting = None;
        for _ in 0..500 {
            let rows = admin(&db)
                .await
                .query(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = 'victim' \
                     AND wait_event_type = 'Lock'",
                    &[],
                )
                .await
                .unwrap();
            if let Some(r) = rows.first() {
                waiting = Some(r.get::<_, i32>(0));
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let pid = waiting.expect("the victim's UPDATE never waited on the row lock");
        let killed: bool = admin(&db)
            .await
            .query_one("SELECT pg_terminate_backend($1)", &[&pid])
            .await
            .unwrap()
            .get(0);
        assert!(killed);
        tokio::time::sleep(Duration::from_millis(100)).await;
        tx.commit().await.unwrap();

        let result = consuming.await.unwrap().unwrap();
        let used = result.expect("the retried consume is the one success");
        assert_eq!(used.status, ApprovalStatus::Consumed);
        assert!(
            !backend_pids(&db, "victim").await.contains(&pid),
            "that backend is gone"
        );
        assert_eq!(
            store.consume(&req.id, 0).await.unwrap(),
            Err(ConsumeRefusal::AlreadyConsumed)
        );
    }

    /// A consume stuck behind a row lock is cancelled by the statement
    /// timeout: a typed, retryable `Busy`, and nothing consumed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn statement_timeout_is_a_typed_retryable_error() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("stmt").await;
        let store = PostgresApprovalStore::connect_with(
            &url_for(&db, ""),
            PostgresOptions {
                statement_timeout: Some(Duration::from_millis(300)),
                ..options(PgClock::Database)
            },
        )
        .await
        .unwrap();
        let req = approved(&store, Some("alice")).await;
        let mut locker = admin(&db).await;
        let tx = locker.transaction().await.unwrap();
        tx.execute(
            "SELECT 1 FROM orpc_approvals WHERE id = $1 FOR UPDATE",
            &[&req.id],
        )
        .await
        .unwrap();
        let started = Instant::now();
        let err = store.consume(&req.id, 0).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            matches!(
                err,
                StoreError::Backend {
                    kind: BackendErrorKind::Busy,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_capability_error().retryable);
        tx.rollback().await.unwrap();
        assert!(
            store.consume(&req.id, 0).await.unwrap().is_ok(),
            "usable once released"
        );
    }

    /// Many consumes while another session keeps killing their
    /// connections at random moments: per request at most one success,
    /// every other answer "already consumed" or a typed backend error, and
    /// every success is backed by a consumed row.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn consumes_under_random_connection_kills_succeed_at_most_once() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("chaos").await;
        let store = store_on(&db, PgClock::Database).await;
        let victim = Arc::new(
            PostgresApprovalStore::connect_with(
                &url_for(&db, "sslmode=disable&application_name=chaos"),
                PostgresOptions {
                    max_connections: 8,
                    ..options(PgClock::Database)
                },
            )
            .await
            .unwrap(),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let kills = Arc::new(AtomicUsize::new(0));
        let killer = {
            let (stop, kills, killer_client) = (stop.clone(), kills.clone(), admin(&db).await);
            tokio::spawn(async move {
                let mut n: u64 = 0;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let row = killer_client
                        .query_one(
                            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) \
                             FROM pg_stat_activity WHERE application_name = 'chaos'",
                            &[],
                        )
                        .await
                        .unwrap();
                    kills.fetch_add(
                        usize::try_from(row.get::<_, i64>(0)).unwrap(),
                        Ordering::SeqCst,
                    );
                    // Irregular pauses, so kills land at varied moments.
                    tokio::time::sleep(Duration::from_millis(5 + (n * 7919) % 37)).await;
                }
            })
        };
        const ROUNDS: usize = 12;
        let mut successes_total = 0;
        for _ in 0..ROUNDS {
            let req = approved(&store, Some("alice")).await;
            let tasks: Vec<_> = (0..8)
                .map(|_| {
                    let (v, id) = (victim.clone(), req.id.clone());
                    tokio::spawn(async move { v.consume(&id, 0).await })
                })
                .collect();
            let (mut ok, mut unknown) = (0, 0);
            for t in tasks {
                match t.await.unwrap() {
                    Ok(Ok(used)) => {
                        assert_eq!(used.id, req.id);
                        ok += 1;
                    }
                    Ok(Err(refusal)) => assert_eq!(refusal, ConsumeRefusal::AlreadyConsumed),
                    Err(e) => {
                        assert!(e.is_backend(), "{e:?}");
                        unknown += 1;
                    }
                }
            }
            assert!(ok <= 1, "{ok} successes for one approval");
            let status = store.get(&req.id).await.unwrap().unwrap().status;
            if ok == 1 {
                assert_eq!(status, ApprovalStatus::Consumed);
            } else {
                // Consumed with no success reported is only acceptable
                // when some caller was told "outcome unknown" (a backend
                // error), never when every caller heard "already consumed".
                assert!(
                    status == ApprovalStatus::Approved || unknown > 0,
                    "consumed, yet nobody was told it succeeded or might have"
                );
            }
            successes_total += ok;
        }
        stop.store(true, Ordering::SeqCst);
        killer.await.unwrap();
        eprintln!(
            "chaos: {} connections killed, {successes_total}/{ROUNDS} approvals used",
            kills.load(Ordering::SeqCst)
        );
        assert!(
            kills.load(Ordering::SeqCst) > 0,
            "the killer never hit a connection"
        );
        // With the kills over, the same store consumes at once: it came
        // through with working connections (under load every chaotic
        // round may have ended "unknown", which proves nothing by itself).
        let calm = approved(&store, Some("alice")).await;
        let used = victim.consume(&calm.id, 0).await.unwrap();
        assert_eq!(used.map(|u| u.id), Ok(calm.id));
    }

    /// A TCP proxy that can cut a connection on the server's next reply:
    /// the statement has reached the server (and committed), the client
    /// never hears back.
    struct CuttingProxy {
        port: u16,
        cut_next_reply: Arc<AtomicBool>,
        /// Cuts the server's next reply that completes a COMMIT (one use).
        cut_next_commit: Arc<AtomicBool>,
        cuts: Arc<AtomicUsize>,
        accepted: Arc<AtomicUsize>,
    }

    /// A cutting proxy in front of the test server, and the URL of `db`
    /// through it.
    async fn proxied(db: &str) -> (CuttingProxy, String) {
        let port: u16 = server().rsplit_once(':').unwrap().1.parse().unwrap();
        let proxy = cutting_proxy(port).await;
        let url = format!(
            "postgresql://postgres@127.0.0.1:{}/{db}?sslmode=disable",
            proxy.port
        );
        (proxy, url)
    }

    /// The server's CommandComplete message for a COMMIT: `C`, its length
    /// (4 + "COMMIT\0"), the tag.
    const COMMIT_DONE: &[u8] = b"C\x00\x00\x00\x0bCOMMIT\x00";

    async fn cutting_proxy(target_port: u16) -> CuttingProxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut_next_reply = Arc::new(AtomicBool::new(false));
        let cut_next_commit = Arc::new(AtomicBool::new(false));
        let cuts = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (cut, n_cuts, n_acc) = (cut_next_reply.clone(), cuts.clone(), accepted.clone());
        let on_commit = cut_next_commit.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                n_acc.fetch_add(1, Ordering::SeqCst);
                let server = tokio::net::TcpStream::connect(("127.0.0.1", target_port))
                    .await
                    .unwrap();
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut cr, &mut sw).await;
                });
                let (cut, n_cuts) = (cut.clone(), n_cuts.clone());
                let on_commit = on_commit.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16384];
                    // The last bytes passed on: a message split across two
                    // reads is still recognised.
                    let mut tail: Vec<u8> = Vec::new();
                    loop {
                        let n = match sr.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        tail.extend_from_slice(&buf[..n]);
                        let commit = tail.windows(COMMIT_DONE.len()).any(|w| w == COMMIT_DONE);
                        tail.drain(..tail.len().saturating_sub(COMMIT_DONE.len()));
                        let at_commit = commit && on_commit.swap(false, Ordering::SeqCst);
                        if cut.swap(false, Ordering::SeqCst) || at_commit {
                            n_cuts.fetch_add(1, Ordering::SeqCst);
                            // Dropping both halves closes the client's socket.
                            return;
                        }
                        if cw.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        CuttingProxy {
            port,
            cut_next_reply,
            cut_next_commit,
            cuts,
            accepted,
        }
    }

    /// The consume commits but its connection drops before the answer
    /// arrives. The caller must neither be told "already consumed" (it
    /// consumed it) nor get a success the database did not confirm: the
    /// store reconnects, finds its own token on the row, and succeeds —
    /// once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn connection_dropped_after_commit_is_resolved_by_the_token() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("cut").await;
        let store = store_on(&db, PgClock::Database).await;
        let (proxy, via_proxy) = proxied(&db).await;
        let victim = PostgresApprovalStore::connect_with(
            &via_proxy,
            PostgresOptions {
                max_connections: 1,
                ..options(PgClock::Database)
            },
        )
        .await
        .unwrap();
        // Warm the one connection's statement cache, so the next bytes the
        // server sends are the consume UPDATE's result.
        let warm = approved(&store, Some("alice")).await;
        victim.consume(&warm.id, 0).await.unwrap().unwrap();
        assert_eq!(
            victim.consume(&warm.id, 0).await.unwrap(),
            Err(ConsumeRefusal::AlreadyConsumed)
        );

        let req = approved(&store, Some("alice")).await;
        proxy.cut_next_reply.store(true, Ordering::SeqCst);
        let used = victim.consume(&req.id, 0).await.unwrap();
        assert_eq!(proxy.cuts.load(Ordering::SeqCst), 1, "the reply was cut");
        assert_eq!(
            proxy.accepted.load(Ordering::SeqCst),
            2,
            "and a new connection made"
        );
        let used = used.expect("this call consumed it: the token says so");
        assert_eq!(used.id, req.id);
        assert_eq!(used.status, ApprovalStatus::Consumed);
        assert_eq!(
            store.consume(&req.id, 0).await.unwrap(),
            Err(ConsumeRefusal::AlreadyConsumed)
        );
    }

    /// A create commits but its connection drops before the COMMIT's
    /// answer arrives, with the request filling the actor's last pending
    /// slot. The retry must find the request it stored, not count it
    /// against the quota and report LIMIT_EXCEEDED for a request that is
    /// stored (and would then wait, unseen by its caller, for an approver).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn a_create_whose_commit_answer_is_lost_at_the_quota_is_stored_once() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("cutcreate").await;
        let (proxy, via_proxy) = proxied(&db).await;
        let victim = PostgresApprovalStore::connect_with(
            &via_proxy,
            PostgresOptions {
                max_connections: 1,
                max_pending_per_actor: 1,
                ..options(PgClock::Database)
            },
        )
        .await
        .unwrap();
        // The one connection made, with another actor's request.
        victim.create(&request(Some("bob"))).await.unwrap();

        let req = request(Some("alice"));
        proxy.cut_next_commit.store(true, Ordering::SeqCst);
        let created = victim.create(&req).await;
        assert_eq!(
            proxy.cuts.load(Ordering::SeqCst),
            1,
            "the COMMIT's answer was cut"
        );
        assert_eq!(
            proxy.accepted.load(Ordering::SeqCst),
            2,
            "and a new connection made"
        );
        assert!(
            created.is_ok(),
            "the stored request is reported created: {created:?}"
        );
        let stored = victim.get(&req.id).await.unwrap().expect("stored");
        assert_eq!(stored.status, ApprovalStatus::Pending);
        let alices = victim
            .list(&ListFilter {
                actor_id: Some("alice".into()),
                ..ListFilter::default()
            })
            .await
            .unwrap();
        assert_eq!(alices.len(), 1, "stored once");
    }

    /// With the server gone for good, every operation ends in a typed
    /// backend error (after its retries), never a success or a panic.
    #[tokio::test]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn unreachable_server_is_a_typed_error() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("gone").await;
        let (proxy, via_proxy) = proxied(&db).await;
        let store = PostgresApprovalStore::connect_with(
            &via_proxy,
            PostgresOptions {
                connect_timeout: Duration::from_millis(300),
                ..options(PgClock::Database)
            },
        )
        .await
        .unwrap();
        let req = approved(&store, Some("alice")).await;
        // From now on every reply is cut: statements reach the server,
        // answers never come back.
        let cutter = proxy.cut_next_reply.clone();
        let keep_cutting = tokio::spawn(async move {
            loop {
                cutter.store(true, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        });
        let err = store.consume(&req.id, 0).await.unwrap_err();
        assert!(err.is_backend(), "{err:?}");
        assert!(
            matches!(
                err,
                StoreError::Backend {
                    kind: BackendErrorKind::Io | BackendErrorKind::CannotOpen,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(err.to_capability_error().code, ErrorCode::Internal);
        keep_cutting.abort();

        // Connecting to nothing at all.
        let err = PostgresApprovalStore::connect_with(
            "postgresql://postgres@127.0.0.1:1/none?sslmode=disable",
            PostgresOptions {
                connect_timeout: Duration::from_millis(300),
                ..options(PgClock::Database)
            },
        )
        .await
        .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Backend {
                    kind: BackendErrorKind::CannotOpen,
                    ..
                }
            ),
            "{err:?}"
        );
        let e = err.to_capability_error();
        assert!(
            !e.message.contains("127.0.0.1"),
            "no connection details reach the caller"
        );
    }

    // ------------------------------------------------ schema and TLS

    /// Ten instances starting together on an empty database migrate it
    /// once; a database from a newer library is refused.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn concurrent_startup_migrates_once_and_newer_schemas_are_refused() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("migrate").await;
        let starts: Vec<_> = (0..10)
            .map(|_| {
                let url = url_for(&db, "");
                tokio::spawn(async move {
                    PostgresApprovalStore::connect_with(&url, options(PgClock::Database)).await
                })
            })
            .collect();
        for s in starts {
            s.await.unwrap().unwrap();
        }
        let rows = admin(&db)
            .await
            .query(
                "SELECT version, name FROM orpc_schema_migrations ORDER BY version",
                &[],
            )
            .await
            .unwrap();
        let got: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        assert_eq!(
            got,
            vec![
                (1, "0001_approvals".to_owned()),
                (2, "0002_audit".to_owned()),
                (3, "0003_creation_order".to_owned()),
                (4, "0004_session".to_owned()),
                (5, "0005_repeated_calls".to_owned())
            ]
        );
        assert_eq!(PG_SCHEMA_VERSION, 5);

        admin(&db)
            .await
            .execute(
                "INSERT INTO orpc_schema_migrations (version, name) VALUES (99, 'future')",
                &[],
            )
            .await
            .unwrap();
        let err =
            PostgresApprovalStore::connect_with(&url_for(&db, ""), options(PgClock::Database))
                .await
                .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Backend {
                    kind: BackendErrorKind::Schema,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    /// The operators' SQL files are what the store applies: applying them
    /// by hand gives a database the store accepts as current.
    #[tokio::test]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn migration_files_applied_by_hand_are_accepted() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("byhand").await;
        let client = admin(&db).await;
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres");
        client
            .batch_execute(
                "CREATE TABLE orpc_schema_migrations (version integer PRIMARY KEY, \
                 name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
            )
            .await
            .unwrap();
        for (v, name) in [
            (1, "0001_approvals"),
            (2, "0002_audit"),
            (3, "0003_creation_order"),
            (4, "0004_session"),
            (5, "0005_repeated_calls"),
        ] {
            let sql = std::fs::read_to_string(dir.join(format!("{name}.sql"))).unwrap();
            client.batch_execute(&sql).await.unwrap();
            client
                .execute(
                    "INSERT INTO orpc_schema_migrations (version, name) VALUES ($1, $2)",
                    &[&v, &name],
                )
                .await
                .unwrap();
        }
        let store = store_on(&db, PgClock::Database).await;
        let req = approved(&store, Some("alice")).await;
        assert!(store.consume(&req.id, 0).await.unwrap().is_ok());
    }

    /// The list query for an approval UI's pending queue uses an index.
    #[tokio::test]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn pending_queue_listing_uses_an_index() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("plan").await;
        let _store = store_on(&db, PgClock::Database).await;
        let client = admin(&db).await;
        // Enough rows, mostly decided, that a sequential scan would lose.
        client
            .batch_execute(
                "INSERT INTO orpc_approvals (id, capability_id, input_hash, input, surface, actor, \
                 actor_id, created_at, expires_at, status) \
                 SELECT 'apr_' || lpad(to_hex(g), 32, '0'), 'cap.' || (g % 7), repeat('0', 64), \
                        '{}', 'mcp', '{}', 'actor-' || (g % 50), now() + g * interval '1 ms', \
                        now() + interval '1 hour', \
                        CASE WHEN g % 20 = 0 THEN 'pending' ELSE 'consumed' END \
                 FROM generate_series(1, 20000) g; ANALYZE orpc_approvals",
            )
            .await
            .unwrap();
        for (filter, sql) in [
            (
                "status",
                "SELECT id FROM orpc_approvals WHERE status = 'pending' ORDER BY created_at, seq LIMIT 100",
            ),
            (
                "capability+status",
                "SELECT id FROM orpc_approvals WHERE capability_id = 'cap.3' AND status = 'pending' ORDER BY created_at, seq LIMIT 100",
            ),
            (
                "actor+status",
                "SELECT id FROM orpc_approvals WHERE actor_id = 'actor-7' AND status = 'pending' ORDER BY created_at, seq LIMIT 100",
            ),
        ] {
            let plan: Vec<String> = client
                .query(&format!("EXPLAIN {sql}"), &[])
                .await
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect();
            let plan = plan.join("\n");
            assert!(plan.contains("Index"), "{filter}: {plan}");
            assert!(!plan.contains("Seq Scan"), "{filter}: {plan}");
        }
    }

    fn ca_pem() -> Vec<u8> {
        let path = std::env::var("ORPC_AGENT_TEST_PG_CA").unwrap_or_else(|_| {
            panic!("ORPC_AGENT_TEST_PG_CA (the test server's certificate) is not set: {HOW}")
        });
        std::fs::read(path).unwrap()
    }

    /// `sslmode=require` works: verified against a private CA, or
    /// unverified on request; an unverifiable certificate is refused by
    /// default; a role the server admits only over TLS proves the session
    /// really is encrypted.
    #[tokio::test]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn sslmode_require_works_and_certificates_are_verified() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("tls").await;
        let tls_url = |mode: &str| {
            let base = server().replacen("postgres@", "tls_only@", 1);
            format!("{base}/{db}?sslmode={mode}")
        };
        let with = |tls| PostgresOptions {
            tls,
            ..options(PgClock::Database)
        };
        let store = PostgresApprovalStore::connect_with(
            &tls_url("require"),
            with(PostgresTls::CaPem(ca_pem())),
        )
        .await
        .unwrap();
        let req = approved(&store, Some("alice")).await;
        assert!(store.consume(&req.id, 0).await.unwrap().is_ok());

        let store =
            PostgresApprovalStore::connect_with(&tls_url("require"), with(PostgresTls::NoVerify))
                .await
                .unwrap();
        assert_eq!(
            store.get(&req.id).await.unwrap().unwrap().status,
            ApprovalStatus::Consumed
        );

        // Self-signed, not in the system store: refused, typed.
        let err = PostgresApprovalStore::connect_with(
            &tls_url("require"),
            with(PostgresTls::SystemRoots),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Backend {
                    kind: BackendErrorKind::CannotOpen,
                    ..
                }
            ),
            "{err:?}"
        );
        // The role is refused without TLS: the successes above were encrypted.
        let err = PostgresApprovalStore::connect_with(
            &tls_url("disable"),
            with(PostgresTls::CaPem(ca_pem())),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Backend {
                    kind: BackendErrorKind::CannotOpen,
                    ..
                }
            ),
            "{err:?}"
        );
        // A bad connection string is a typed error too.
        let err = PostgresApprovalStore::connect_with(
            "postgresql://x@127.0.0.1/db?sslmode=bogus",
            with(PostgresTls::NoVerify),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Backend {
                    kind: BackendErrorKind::CannotOpen,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[tokio::test]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn unreadable_rows_are_typed_errors() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("corrupt").await;
        let store = store_on(&db, PgClock::Database).await;
        let good = created(&store, request(Some("alice"))).await;
        admin(&db)
            .await
            .batch_execute(
                "INSERT INTO orpc_approvals (id, capability_id, input_hash, input, surface, actor, \
                 created_at, expires_at, status) VALUES \
                 ('apr_badbadbadbadbadbadbadbadbadbadba', 'c', 'h', '{}', 'carrier-pigeon', '{}', now(), now(), 'pending'), \
                 ('apr_badbadbadbadbadbadbadbadbadbad2', 'c', 'h', '{}', 'mcp', '[1]', now(), now(), 'pending')",
            )
            .await
            .unwrap();
        for id in [
            "apr_badbadbadbadbadbadbadbadbadbadba",
            "apr_badbadbadbadbadbadbadbadbadbad2",
        ] {
            let err = store.get(id).await.unwrap_err();
            assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
        }
        assert!(matches!(
            store.list(&ListFilter::default()).await,
            Err(StoreError::Corrupt { .. })
        ));
        assert_eq!(store.get(&good.id).await.unwrap().unwrap().id, good.id);
    }

    // ------------------------------------------------------ audit sink

    fn record(
        event: AuditEvent,
        approval: &ApprovalRequest,
        outcome: Option<&'static str>,
    ) -> AuditRecord {
        AuditRecord {
            event,
            capability_id: Some(approval.capability_id.clone()),
            requested: None,
            surface: approval.surface,
            actor_id: approval.actor.id.clone(),
            resumed: true,
            policies: Vec::new(),
            approval_id: Some(approval.id.clone()),
            attempts: u32::from(outcome.is_some()),
            started_at: T0,
            duration_ms: 12,
            outcome,
            stage: if outcome.is_some() {
                Stage::Finished
            } else {
                Stage::from_number(10).unwrap()
            },
            traceparent: Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into()),
            tracestate: None,
            request_id: Some("req-1".into()),
            agent_id: None,
            session_id: None,
            failure: None,
            output: None,
            span_output: None,
        }
    }

    /// One row per record, with the queried columns filled, joinable with
    /// the approvals: "who approved what, for which input hash".
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn audit_sink_writes_one_row_per_record() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("audit").await;
        let store = store_on(&db, PgClock::Database).await;
        let req = created(&store, request(Some("alice"))).await;
        store
            .decide(&req.id, Decision::Approve, Some("manager-7"), None, 0, true)
            .await
            .unwrap();
        let used = store.consume(&req.id, 0).await.unwrap().unwrap();
        let sink = PostgresAuditSink::with_pool(store.pool().clone(), 100);
        sink.record(&record(AuditEvent::Started, &used, None));
        sink.record(&record(AuditEvent::Finished, &used, Some("ok")));
        sink.flush().await;
        assert_eq!((sink.written(), sink.dropped(), sink.failed()), (2, 0, 0));

        let rows = admin(&db)
            .await
            .query(
                "SELECT a.event, a.capability_id, a.surface, a.actor_id, p.input_hash, \
                        p.decided_by, a.outcome, a.stage, a.attempts, a.duration_ms, \
                        a.traceparent, floor(extract(epoch from a.started_at) * 1000)::int8, \
                        a.record->>'requestId' \
                 FROM orpc_audit a JOIN orpc_approvals p ON p.id = a.approval_id \
                 WHERE a.approval_id = $1 ORDER BY a.seq",
                &[&used.id],
            )
            .await
            .unwrap();
        assert_eq!(rows.len(), 2);
        let finished = &rows[1];
        assert_eq!(rows[0].get::<_, String>(0), "started");
        assert_eq!(finished.get::<_, String>(0), "finished");
        assert_eq!(finished.get::<_, String>(1), "orders.refund");
        assert_eq!(finished.get::<_, String>(2), "mcp");
        assert_eq!(finished.get::<_, String>(3), "alice");
        // The hash is the request's (joined); the audit row has none (issue 15).
        assert_eq!(finished.get::<_, String>(4), used.input_hash);
        assert_eq!(
            finished.get::<_, String>(5),
            "manager-7",
            "the approver, by join"
        );
        assert_eq!(finished.get::<_, String>(6), "ok");
        assert_eq!(finished.get::<_, i32>(7), 14);
        assert_eq!(finished.get::<_, i32>(8), 1);
        assert_eq!(finished.get::<_, i64>(9), 12);
        assert!(finished.get::<_, String>(10).starts_with("00-0af7"));
        assert_eq!(finished.get::<_, i64>(11), i64::try_from(T0).unwrap());
        assert_eq!(finished.get::<_, String>(12), "req-1");
        assert_eq!(rows[0].get::<_, Option<String>>(6), None);
    }

    /// A database that does not take the records never blocks an
    /// invocation: records beyond the queue are dropped and counted.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn audit_sink_drops_and_counts_when_full() {
        let _shared = CLUSTER.read().await;
        let db = fresh_db("auditfull").await;
        let store = store_on(&db, PgClock::Database).await;
        let req = approved(&store, Some("alice")).await;
        // Lock the table: the writer's INSERT waits, the queue fills.
        let mut locker = admin(&db).await;
        let tx = locker.transaction().await.unwrap();
        tx.batch_execute("LOCK TABLE orpc_audit IN ACCESS EXCLUSIVE MODE")
            .await
            .unwrap();
        let sink = PostgresAuditSink::with_pool(store.pool().clone(), 10);
        let rec = record(AuditEvent::Finished, &req, Some("ok"));
        sink.record(&rec);
        // The writer takes it and blocks on the lock: wait for the event
        // (its INSERT waiting on a lock), not for a guessed duration.
        let watcher = admin(&db).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let waiting: i64 = watcher
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                     AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO orpc_audit%'",
                    &[],
                )
                .await
                .unwrap()
                .get(0);
            if waiting > 0 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the writer never blocked on the lock"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The table stays locked until the rollback below, so a record()
        // that waited for the database would never return: finishing at
        // all (bounded here, to fail rather than hang) shows it does not.
        tokio::time::timeout(Duration::from_secs(30), async {
            for _ in 0..1000 {
                sink.record(&rec);
            }
        })
        .await
        .expect("record() waited for the database");
        // The writer holds the first record and the queue ten: everything
        // else was dropped.
        assert_eq!(sink.dropped(), 990);
        tx.rollback().await.unwrap();
        sink.flush().await;
        assert_eq!(
            sink.written() + sink.dropped(),
            1001,
            "every record counted once"
        );
        assert_eq!(sink.failed(), 0);
        let n: i64 = admin(&db)
            .await
            .query_one("SELECT count(*) FROM orpc_audit", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(u64::try_from(n).unwrap(), sink.written());
    }

    // ------------------------------------------- through the pipeline

    struct CountingHandler(AtomicU32);

    impl orpc_agent_core::pipeline::driver::Handler for CountingHandler {
        fn call<'a>(
            &'a self,
            input: &'a serde_json::Value,
            _cx: orpc_agent_core::pipeline::driver::HandlerContext<'a>,
        ) -> orpc_agent_core::approval::BoxFuture<
            'a,
            Result<serde_json::Value, orpc_agent_core::pipeline::driver::HandlerError>,
        > {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move { Ok(input.clone()) })
        }
    }

    /// Two app instances (two drivers, two stores, one database): a call is
    /// gated on one, approved by a manager through the other, resumed on
    /// the other; the handler runs once; the audit rows answer "who
    /// approved what, for which input hash".
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: make test-postgres"]
    async fn two_instances_gate_approve_resume_and_audit() {
        use orpc_agent_core::frame::Frame;
        use orpc_agent_core::meta::Surface;
        use orpc_agent_core::pipeline::driver::{Call, Driver};
        use orpc_agent_core::pipeline::{Outcome, Payload};
        use orpc_agent_core::{CapabilityDecl, CapabilityRegistry, RegistryOptions};
        use serde_json::json;

        let _shared = CLUSTER.read().await;
        let db = fresh_db("e2e").await;
        let meta = json!({
            "description": "refund an order", "expose": {"mcp": true},
            "sideEffect": "write", "risk": "high",
            "approval": {"required": true, "type": "manager", "expiresInMs": 60000}
        });
        let mut decl = CapabilityDecl::new("orders.refund", meta);
        decl.validate_input = false;
        decl.validate_output = false;
        let registry =
            Arc::new(CapabilityRegistry::build(vec![decl], RegistryOptions::default()).unwrap());
        let handler = Arc::new(CountingHandler(AtomicU32::new(0)));
        let instance = || async {
            let store = Arc::new(store_on(&db, PgClock::Database).await);
            let sink = Arc::new(PostgresAuditSink::with_pool(store.pool().clone(), 100));
            let driver = Driver::builder(registry.clone(), store)
                .handler("orders.refund", handler.clone())
                .audit(sink.clone(), false)
                .build()
                .unwrap();
            (driver, sink)
        };
        let (a, sink_a) = instance().await;
        let (b, sink_b) = instance().await;
        let frame = Frame::new(Surface::Mcp).with_actor(orpc_agent_core::frame::Actor {
            id: Some("alice".into()),
            ..Default::default()
        });
        let input = json!({"orderId": 42, "amount": 1500});
        let Outcome::ApprovalRequired(req) = a
            .invoke("orders.refund", input.clone(), Call::new(frame.clone()))
            .await
        else {
            panic!("expected an approval request")
        };
        b.decide(&req.id, Decision::Approve, Some("manager-9"), Some("ok"))
            .await
            .unwrap();
        // Resumed on instance B with a different caller frame: the
        // recorded actor and surface are used (SI-3).
        let done = b.resume(&req.id, Call::new(Frame::new(Surface::Mcp))).await;
        assert!(
            matches!(&done, Outcome::Ok(Payload::Json(v)) if *v == input),
            "{done:?}"
        );
        let again = a.resume(&req.id, Call::new(Frame::new(Surface::Mcp))).await;
        assert!(
            matches!(&again, Outcome::Error(e) if e.code == ErrorCode::ApprovalConsumed),
            "{again:?}"
        );
        assert_eq!(handler.0.load(Ordering::SeqCst), 1, "the handler ran once");

        sink_a.flush().await;
        sink_b.flush().await;
        assert_eq!(sink_a.dropped() + sink_b.dropped(), 0);
        let rows = admin(&db)
            .await
            .query(
                "SELECT a.outcome, a.actor_id, p.decided_by, a.input_hash \
                 FROM orpc_audit a JOIN orpc_approvals p ON p.id = a.approval_id \
                 WHERE a.event = 'finished' AND a.approval_id = $1 ORDER BY a.seq",
                &[&req.id],
            )
            .await
            .unwrap();
        // Two sinks write independently: rows are compared by outcome, not
        // by insertion order.
        let mut got: Vec<(String, Option<String>, String, Option<String>)> = rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect();
        got.sort();
        // The refused resume is audited as the request it refused (its
        // actor). No audit row carries the input hash (issue 15: it could
        // give away a redacted value).
        let who = |o: &str, actor: Option<&str>, _hash: bool| {
            (
                o.to_owned(),
                actor.map(str::to_owned),
                "manager-9".to_owned(),
                None::<String>,
            )
        };
        assert_eq!(
            got,
            vec![
                who("APPROVAL_CONSUMED", Some("alice"), false),
                who("approval_required", Some("alice"), true),
                who("ok", Some("alice"), true),
            ]
        );
    }
}

/// Without the URL, `--ignored` runs fail loudly rather than pass.
#[cfg(feature = "postgres")]
#[test]
#[ignore = "needs PostgreSQL: make test-postgres"]
fn postgres_url_is_set() {
    assert!(
        std::env::var(pg::URL_ENV).is_ok(),
        "{} is not set: run `make test-postgres`",
        pg::URL_ENV
    );
}
