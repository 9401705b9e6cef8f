#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! One behaviour suite for every `ApprovalStore` (written against
//! `&dyn ApprovalStore`), run on the memory and the SQLite store, plus what
//! only SQLite has: reopening a file, several connections and processes on
//! one file, and a broken or locked database.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use orpc_agent_core::approval::{
    ApprovalRequest, ApprovalStatus, ApprovalStore, BackendErrorKind, ConsumeRefusal, Decision,
    EffectiveStatus, ListFilter, MemoryApprovalStore, SCHEMA_VERSION, SqliteApprovalStore,
    SqliteOptions, StoreError, is_valid_approval_id,
};
use orpc_agent_core::error::{CapabilityError, ErrorCode};

use crate::suite;
use suite::*;

/// A directory removed on drop, so SQLite files do not pile up in /tmp.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!(
            "orpc-approval-test-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn db(&self) -> PathBuf {
        self.0.join("approvals.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `$check(&dyn ApprovalStore)` once on a fresh memory store and once
/// on a fresh SQLite file, as two tests.
macro_rules! on_both_stores {
    ($($check:ident),+ $(,)?) => {$(
        mod $check {
            #[tokio::test]
            async fn memory() {
                super::$check(&orpc_agent_core::approval::MemoryApprovalStore::new()).await;
            }
            #[tokio::test]
            async fn sqlite() {
                let dir = super::TempDir::new();
                let store = orpc_agent_core::approval::SqliteApprovalStore::open(dir.db()).unwrap();
                super::$check(&store).await;
            }
        }
    )+};
}

on_both_stores!(
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
async fn pending_limit_memory() {
    let store = MemoryApprovalStore::new().with_max_pending_per_actor(3);
    pending_limit_counts_only_live_pending(&store, 3).await;
}

#[tokio::test]
async fn pending_limit_sqlite() {
    let dir = TempDir::new();
    let opts = SqliteOptions {
        max_pending_per_actor: 3,
        ..SqliteOptions::default()
    };
    let store = SqliteApprovalStore::open_with(dir.db(), opts).unwrap();
    pending_limit_counts_only_live_pending(&store, 3).await;
}

// ------------------------------------------------------------ the request

#[test]
fn ids_are_128_random_bits_in_lowercase_hex() {
    let a = request(None);
    let b = request(None);
    assert_ne!(a.id, b.id);
    for id in [&a.id, &b.id] {
        assert!(id.starts_with("apr_"), "{id}");
        assert_eq!(id.len(), 4 + 32);
        assert!(
            id[4..]
                .bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
        );
        assert!(is_valid_approval_id(id));
    }
    assert!(!is_valid_approval_id(
        "apr_0123456789ABCDEF0123456789abcdef"
    ));
    assert!(!is_valid_approval_id("apr_0123"));
    assert!(!is_valid_approval_id("0123456789abcdef0123456789abcdef"));
}

#[test]
fn request_json_uses_camel_case_and_design_names() {
    let mut req = request(Some("alice"));
    req.id = "apr_0123456789abcdef0123456789abcdef".into();
    let v = serde_json::to_value(&req).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "capabilityId",
            "input",
            "surface",
            "actor",
            "type",
            "reason",
            "createdAt",
            "expiresAt",
            "status"
        ]
    );
    assert_eq!(v["surface"], "mcp");
    assert_eq!(v["status"], "pending");
    assert_eq!(v["createdAt"], T0);
    assert_eq!(v["actor"]["id"], "alice");
    // The input hash is the store's and the core's: no view shows it (an
    // unsalted hash of the input would let a redacted PIN be recovered).
    assert!(!v.to_string().contains(&req.input_hash));
    let back: ApprovalRequest = serde_json::from_value(v).unwrap();
    assert_eq!(
        back,
        ApprovalRequest {
            input_hash: String::new(),
            ..req.clone()
        }
    );

    let decided = ApprovalRequest {
        status: ApprovalStatus::Consumed,
        decided_by: Some("m".into()),
        decided_at_ms: Some(T0 + 1),
        decision_reason: Some("ok".into()),
        ..req
    };
    let v = serde_json::to_value(&decided).unwrap();
    assert_eq!(v["status"], "consumed");
    assert_eq!(v["decidedBy"], "m");
    assert_eq!(v["decidedAt"], T0 + 1);
    assert_eq!(v["decisionReason"], "ok");
    assert_eq!(
        serde_json::from_value::<ApprovalRequest>(v).unwrap(),
        ApprovalRequest {
            input_hash: String::new(),
            ..decided
        }
    );
}

#[test]
fn huge_expiry_saturates_instead_of_wrapping() {
    let req = request_at("c", None, T0, u64::MAX);
    assert_eq!(req.expires_at_ms, u64::MAX);
    assert_eq!(req.effective_status(T0 + HOUR), EffectiveStatus::Pending);
}

// ------------------------------------------------------------ concurrency

/// `n` threads released together, each consuming `id` once through the
/// store given by `pick(thread index)`. Returns (successes, already-consumed).
fn race(
    n: usize,
    id: &str,
    pick: &(dyn Fn(usize) -> Arc<dyn ApprovalStore> + Sync),
) -> (usize, usize) {
    let start = Barrier::new(n);
    let results: Vec<Result<ApprovalRequest, ConsumeRefusal>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let store = pick(i);
                let start = &start;
                s.spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .unwrap();
                    start.wait();
                    rt.block_on(store.consume(id, T0 + 2)).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ok = results.iter().filter(|r| r.is_ok()).count();
    let consumed = results
        .iter()
        .filter(|r| **r == Err(ConsumeRefusal::AlreadyConsumed))
        .count();
    (ok, consumed)
}

#[test]
fn fifty_threads_consume_once_memory() {
    let store: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovalStore::new());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let req = rt.block_on(approved(store.as_ref(), Some("alice")));
    assert_eq!(race(50, &req.id, &|_| store.clone()), (1, 49));
}

#[test]
fn fifty_threads_on_five_connections_consume_once_sqlite() {
    // Five stores = five SQLite connections on one file: the atomicity under
    // test is the UPDATE's, not the store's mutex.
    let dir = TempDir::new();
    let stores: Vec<Arc<dyn ApprovalStore>> = (0..5)
        .map(|_| Arc::new(SqliteApprovalStore::open(dir.db()).unwrap()) as Arc<dyn ApprovalStore>)
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for round in 0..3 {
        let req = rt.block_on(approved(stores[0].as_ref(), Some("alice")));
        assert_eq!(
            race(50, &req.id, &|i| stores[i % 5].clone()),
            (1, 49),
            "round {round}"
        );
    }
}

#[test]
fn concurrent_decisions_one_wins_sqlite() {
    let dir = TempDir::new();
    let stores: Vec<Arc<dyn ApprovalStore>> = (0..4)
        .map(|_| Arc::new(SqliteApprovalStore::open(dir.db()).unwrap()) as Arc<dyn ApprovalStore>)
        .collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let req = rt.block_on(created(stores[0].as_ref(), request(Some("alice"))));
    let start = Barrier::new(20);
    let results: Vec<Result<ApprovalRequest, StoreError>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..20)
            .map(|i| {
                let store = stores[i % 4].clone();
                let (start, id) = (&start, req.id.as_str());
                s.spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .build()
                        .unwrap();
                    let d = if i % 2 == 0 {
                        Decision::Approve
                    } else {
                        Decision::Reject
                    };
                    let who = format!("m{i}");
                    start.wait();
                    rt.block_on(store.decide(id, d, Some(&who), None, T0 + 1, false))
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1);
    let stored = rt.block_on(stores[1].get(&req.id)).unwrap().unwrap();
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

const CHILD_ENV: &str = "ORPC_APPROVAL_RACE_CHILD";

/// Five processes × ten threads consume one approved request in one
/// SQLite file: exactly one succeeds, 49 are told it was already consumed.
/// The test re-runs its own executable as the children.
#[test]
fn sqlite_cross_process_race() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        return race_child(&spec);
    }
    let dir = TempDir::new();
    let store = SqliteApprovalStore::open(dir.db()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let req = rt.block_on(approved(&store, Some("alice")));
    drop(store);
    let go = dir.0.join("go");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..5)
        .map(|_| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    // The test binary is tests/main.rs: names carry the module.
                    "approval_store::sqlite_cross_process_race",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(
                    CHILD_ENV,
                    format!("{}|{}|{}", dir.db().display(), req.id, go.display()),
                )
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Let every child open its store and wait at the line.
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&go, b"go").unwrap();
    let (mut ok, mut consumed) = (0, 0);
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "child failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("RACE ").map(|(_, rest)| rest.trim()))
            .unwrap_or_else(|| panic!("no RACE line in child output: {stdout}"));
        let (o, c) = line.split_once(' ').unwrap();
        ok += o.parse::<usize>().unwrap();
        consumed += c.parse::<usize>().unwrap();
    }
    assert_eq!((ok, consumed), (1, 49));
    let store = SqliteApprovalStore::open(dir.db()).unwrap();
    let stored = rt.block_on(store.get(&req.id)).unwrap().unwrap();
    assert_eq!(stored.status, ApprovalStatus::Consumed);
}

fn race_child(spec: &str) {
    let mut parts = spec.split('|');
    let (db, id, go) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let store: Arc<dyn ApprovalStore> = Arc::new(SqliteApprovalStore::open(db).unwrap());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !Path::new(go).exists() {
        assert!(std::time::Instant::now() < deadline, "no go signal");
        std::thread::sleep(Duration::from_millis(2));
    }
    let (ok, consumed) = race(10, id, &|_| store.clone());
    assert_eq!(ok + consumed, 10, "every refusal is AlreadyConsumed");
    println!("RACE {ok} {consumed}");
}

// ------------------------------------------------------ SQLite specifics

#[tokio::test]
async fn sqlite_requests_survive_reopen() {
    let dir = TempDir::new();
    let (pending, approved_req, used) = {
        let store = SqliteApprovalStore::open(dir.db()).unwrap();
        let pending = created(&store, request(Some("alice"))).await;
        let approved_req = approved(&store, Some("bob")).await;
        let used = approved(&store, None).await;
        let used = store.consume(&used.id, T0 + 2).await.unwrap().unwrap();
        (pending, approved_req, used)
    };
    let store = SqliteApprovalStore::open(dir.db()).unwrap();
    assert_eq!(store.get(&pending.id).await.unwrap().unwrap(), pending);
    assert_eq!(
        store.get(&approved_req.id).await.unwrap().unwrap(),
        approved_req
    );
    assert_eq!(store.get(&used.id).await.unwrap().unwrap(), used);
    assert_eq!(store.list(&ListFilter::default()).await.unwrap().len(), 3);
    // Single use holds across the restart, and the approved one still works.
    assert_eq!(
        store.consume(&used.id, T0 + 3).await.unwrap(),
        Err(ConsumeRefusal::AlreadyConsumed)
    );
    assert!(
        store
            .consume(&approved_req.id, T0 + 3)
            .await
            .unwrap()
            .is_ok()
    );
    drop(store);

    let raw = rusqlite::Connection::open(dir.db()).unwrap();
    let version: i64 = raw
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let mode: String = raw
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    // A rollback journal: nothing is memory-mapped, so no file fault can
    // end the process with SIGBUS.
    assert_eq!(mode, "delete");
    let consumed_at: Option<i64> = raw
        .query_row(
            "SELECT consumed_at_ms FROM approvals WHERE id = ?1",
            [&used.id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(consumed_at, Some(i64::try_from(T0 + 2).unwrap()));
}

/// A database written by a version-1 library (no creation sequence) is
/// migrated when opened: its rows keep their old (created_at, id) order and
/// requests created afterwards list after them, in creation order.
#[tokio::test]
async fn sqlite_version_1_database_gains_a_creation_order() {
    let dir = TempDir::new();
    let old = [
        request(Some("ana")),
        request(Some("ana")),
        request(Some("bob")),
    ];
    {
        let raw = rusqlite::Connection::open(dir.db()).unwrap();
        raw.execute_batch(
            "CREATE TABLE approvals (
                id TEXT PRIMARY KEY NOT NULL, capability_id TEXT NOT NULL,
                input_hash TEXT NOT NULL, input TEXT NOT NULL, surface TEXT NOT NULL,
                actor TEXT NOT NULL, actor_id TEXT, approval_type TEXT, reason TEXT,
                created_at_ms INTEGER NOT NULL, expires_at_ms INTEGER NOT NULL,
                status TEXT NOT NULL
                    CHECK (status IN ('pending', 'approved', 'rejected', 'consumed')),
                decided_by TEXT, decided_at_ms INTEGER, decision_reason TEXT,
                consumed_at_ms INTEGER
            ) STRICT;
            CREATE INDEX approvals_by_created ON approvals (created_at_ms, id);
            CREATE INDEX approvals_by_actor_pending ON approvals (actor_id, status, expires_at_ms);
            PRAGMA user_version = 1;",
        )
        .unwrap();
        for r in &old {
            raw.execute(
                "INSERT INTO approvals (id, capability_id, input_hash, input, surface, actor, \
                 actor_id, approval_type, reason, created_at_ms, expires_at_ms, status) \
                 VALUES (?1, ?2, ?3, ?4, 'mcp', ?5, ?6, ?7, ?8, ?9, ?10, 'pending')",
                rusqlite::params![
                    r.id,
                    r.capability_id,
                    r.input_hash,
                    r.input.to_string(),
                    serde_json::to_string(&r.actor).unwrap(),
                    r.actor_id(),
                    r.approval_type,
                    r.reason,
                    i64::try_from(r.created_at_ms).unwrap(),
                    i64::try_from(r.expires_at_ms).unwrap(),
                ],
            )
            .unwrap();
        }
    }
    let store = SqliteApprovalStore::open(dir.db()).unwrap();
    let mut want: Vec<String> = old.iter().map(|r| r.id.clone()).collect();
    want.sort();
    for _ in 0..5 {
        want.push(created(&store, request(Some("ana"))).await.id);
    }
    let listed: Vec<String> = store
        .list(&ListFilter::default())
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(listed, want);
    drop(store);
    let raw = rusqlite::Connection::open(dir.db()).unwrap();
    let version: i64 = raw
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}

fn backend_kind(e: &StoreError) -> BackendErrorKind {
    match e {
        StoreError::Backend { kind, .. } => *kind,
        other => panic!("expected a backend error, got {other:?}"),
    }
}

#[tokio::test]
async fn sqlite_locked_database_is_a_typed_retryable_error() {
    let dir = TempDir::new();
    let opts = SqliteOptions {
        busy_timeout: Duration::from_millis(50),
        ..SqliteOptions::default()
    };
    let store = SqliteApprovalStore::open_with(dir.db(), opts).unwrap();
    let req = approved(&store, Some("alice")).await;

    let locker = rusqlite::Connection::open(dir.db()).unwrap();
    locker.execute_batch("BEGIN IMMEDIATE").unwrap();

    let err = store.create(&request(Some("alice"))).await.unwrap_err();
    assert_eq!(backend_kind(&err), BackendErrorKind::Busy);
    assert!(err.is_backend());
    let e = CapabilityError::from(err);
    assert_eq!(e.code, ErrorCode::Internal);
    assert!(e.retryable);
    assert_eq!(e.details.unwrap()["store"], "busy");
    assert!(
        !e.message.contains("approvals.db"),
        "no file paths reach the caller"
    );

    let err = store.consume(&req.id, T0 + 2).await.unwrap_err();
    assert_eq!(backend_kind(&err), BackendErrorKind::Busy);
    let err = store
        .decide(&req.id, Decision::Reject, Some("m"), None, T0 + 2, false)
        .await
        .unwrap_err();
    // The read sees the approved row (WAL readers are not blocked), so the
    // rules refuse before any write is attempted.
    assert!(matches!(err, StoreError::AlreadyDecided { .. }));
    // Reads still work under a writer's lock in WAL mode.
    assert!(store.get(&req.id).await.unwrap().is_some());

    locker.execute_batch("ROLLBACK").unwrap();
    assert!(
        store.consume(&req.id, T0 + 2).await.unwrap().is_ok(),
        "usable once released"
    );
}

/// Files cut short under an open store (an operator's `truncate`, a
/// restore gone wrong) are typed store errors, never a crash: in WAL mode
/// the truncated `-shm` mapping ended the process with SIGBUS (issue 15,
/// item 2). Nothing committed before is lost while the file is whole.
#[tokio::test]
async fn sqlite_files_cut_short_under_an_open_store_are_errors_not_a_crash() {
    let dir = TempDir::new();
    let store = SqliteApprovalStore::open(dir.db()).unwrap();
    let kept = approved(&store, Some("alice")).await;
    let mut shm = dir.db().into_os_string();
    shm.push("-shm");
    assert!(
        !std::path::Path::new(&shm).exists(),
        "no shared-memory file is mapped"
    );
    // Whole again from a copy taken now: what was committed is there.
    let copy = dir.db().with_extension("copy");
    std::fs::copy(dir.db(), &copy).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.db())
        .unwrap()
        .set_len(0)
        .unwrap();
    // Reads and writes on the cut file fail typed (or, for a read of a
    // file SQLite now sees as empty, find nothing); the process lives.
    let read = store.get(&kept.id).await;
    assert!(matches!(read, Ok(None) | Err(_)), "{read:?}");
    let write = store.consume(&kept.id, T0 + 1).await;
    assert!(
        !matches!(write, Ok(Ok(_))),
        "a consume on a cut file cannot succeed: {write:?}"
    );
    drop(store);
    std::fs::copy(&copy, dir.db()).unwrap();
    let again = SqliteApprovalStore::open(dir.db()).unwrap();
    assert_eq!(
        again.get(&kept.id).await.unwrap().unwrap().status,
        ApprovalStatus::Approved
    );
    assert!(again.consume(&kept.id, T0 + 2).await.unwrap().is_ok());
}

#[tokio::test]
async fn sqlite_read_only_database_is_a_typed_error() {
    let dir = TempDir::new();
    let req = {
        let store = SqliteApprovalStore::open(dir.db()).unwrap();
        approved(&store, Some("alice")).await
    };
    let uri = format!("file:{}?mode=ro", dir.db().display());
    let store = SqliteApprovalStore::open(&uri).unwrap();
    assert_eq!(
        store.get(&req.id).await.unwrap().unwrap(),
        req,
        "reads work"
    );
    let err = store.create(&request(Some("alice"))).await.unwrap_err();
    assert_eq!(backend_kind(&err), BackendErrorKind::ReadOnly);
    let err = store.consume(&req.id, T0 + 2).await.unwrap_err();
    assert_eq!(backend_kind(&err), BackendErrorKind::ReadOnly);
    assert!(!CapabilityError::from(err).retryable);
}

#[test]
fn sqlite_unopenable_paths_are_typed_errors() {
    let dir = TempDir::new();
    let missing = dir.0.join("no-such-dir").join("approvals.db");
    let err = SqliteApprovalStore::open(&missing).unwrap_err();
    assert_eq!(backend_kind(&err), BackendErrorKind::CannotOpen);

    let garbage = dir.0.join("garbage.db");
    std::fs::write(&garbage, vec![0x5a; 8192]).unwrap();
    let err = SqliteApprovalStore::open(&garbage).unwrap_err();
    assert_eq!(backend_kind(&err), BackendErrorKind::Corrupt);

    let newer = dir.0.join("newer.db");
    let raw = rusqlite::Connection::open(&newer).unwrap();
    raw.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(raw);
    let err = SqliteApprovalStore::open(&newer).unwrap_err();
    assert_eq!(backend_kind(&err), BackendErrorKind::Schema);
}

#[tokio::test]
async fn sqlite_unreadable_row_is_a_typed_error() {
    let dir = TempDir::new();
    let store = SqliteApprovalStore::open(dir.db()).unwrap();
    let good = created(&store, request(Some("alice"))).await;
    let raw = rusqlite::Connection::open(dir.db()).unwrap();
    raw.execute(
        "INSERT INTO approvals (id, capability_id, input_hash, input, surface, actor, \
         created_at_ms, expires_at_ms, status) \
         VALUES ('apr_badbadbadbadbadbadbadbadbadbadba', 'c', 'h', '{not json', 'mcp', '{}', 1, 2, 'pending')",
        [],
    )
    .unwrap();
    raw.execute(
        "INSERT INTO approvals (id, capability_id, input_hash, input, surface, actor, \
         created_at_ms, expires_at_ms, status) \
         VALUES ('apr_badbadbadbadbadbadbadbadbadbad2', 'c', 'h', '{}', 'carrier-pigeon', '{}', 1, 2, 'pending')",
        [],
    )
    .unwrap();
    for id in [
        "apr_badbadbadbadbadbadbadbadbadbadba",
        "apr_badbadbadbadbadbadbadbadbadbad2",
    ] {
        let err = store.get(id).await.unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
        assert!(err.is_backend());
        assert_eq!(code(&err), ErrorCode::Internal);
    }
    assert!(matches!(
        store.list(&ListFilter::default()).await,
        Err(StoreError::Corrupt { .. })
    ));
    // Rows that read fine still do.
    assert_eq!(store.get(&good.id).await.unwrap().unwrap(), good);
}

#[test]
fn list_limit_defaults_and_clamps() {
    use orpc_agent_core::approval::{DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT};
    let with = |limit| ListFilter {
        limit,
        ..ListFilter::default()
    };
    assert_eq!(with(0).effective_limit(), DEFAULT_LIST_LIMIT);
    assert_eq!(with(7).effective_limit(), 7);
    assert_eq!(with(MAX_LIST_LIMIT + 1).effective_limit(), MAX_LIST_LIMIT);
    assert_eq!(with(u32::MAX).effective_limit(), MAX_LIST_LIMIT);
}

#[tokio::test]
async fn list_pages_are_clamped_on_both_stores() {
    use orpc_agent_core::approval::{DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT};
    let dir = TempDir::new();
    let sqlite = SqliteApprovalStore::open(dir.db()).unwrap();
    let memory = MemoryApprovalStore::new();
    let stores: [&dyn ApprovalStore; 2] = [&memory, &sqlite];
    let n = usize::try_from(MAX_LIST_LIMIT).unwrap() + 5;
    for store in stores {
        for i in 0..n {
            let who = format!("actor-{}", i % 3);
            let at = T0 + u64::try_from(i).unwrap();
            store
                .create(&request_at("c.x", Some(&who), at, HOUR))
                .await
                .unwrap();
        }
        let page = |limit| ListFilter {
            limit,
            ..ListFilter::default()
        };
        let default_page = store.list(&page(0)).await.unwrap();
        assert_eq!(
            default_page.len(),
            usize::try_from(DEFAULT_LIST_LIMIT).unwrap()
        );
        let big = store.list(&page(u32::MAX)).await.unwrap();
        assert_eq!(big.len(), usize::try_from(MAX_LIST_LIMIT).unwrap());
        assert_eq!(big[..default_page.len()], default_page[..]);
    }
}

/// The memory store keeps a finished request for its retention window
/// (a replay is told CONSUMED), then drops it at a sweep (a replay is
/// NOT_FOUND — never a second run); pending and approved requests stay,
/// and the per-actor pending count stays right.
#[tokio::test]
async fn memory_store_drops_finished_requests_after_retention() {
    use orpc_agent_core::approval::MEMORY_SWEEP_EVERY as SWEEP_EVERY;
    let store = MemoryApprovalStore::new().with_retention_ms(1_000);
    let decide = |id: String, d: Decision| {
        let store = &store;
        async move {
            store
                .decide(&id, d, Some("bob"), None, 10, false)
                .await
                .unwrap()
        }
    };
    let consumed = request_at("a.b", Some("alice"), 0, 100);
    store.create(&consumed).await.unwrap();
    decide(consumed.id.clone(), Decision::Approve).await;
    store.consume(&consumed.id, 20).await.unwrap().unwrap();
    let rejected = request_at("a.b", Some("alice"), 0, 100);
    store.create(&rejected).await.unwrap();
    decide(rejected.id.clone(), Decision::Reject).await;
    let expired = request_at("a.b", Some("carol"), 0, 100);
    store.create(&expired).await.unwrap();
    let approved_late = request_at("a.b", Some("dave"), 0, 10_000_000);
    store.create(&approved_late).await.unwrap();
    decide(approved_late.id.clone(), Decision::Approve).await;
    // Within the window: kept, and a replay is told what happened.
    assert_eq!(
        store.consume(&consumed.id, 500).await.unwrap().unwrap_err(),
        ConsumeRefusal::AlreadyConsumed
    );
    // Long after: the next sweep drops the three finished ones.
    let later = 5_000;
    for i in 0..SWEEP_EVERY - 4 {
        store
            .create(&request_at("a.b", Some(&format!("u{i}")), later, 60_000))
            .await
            .unwrap();
    }
    assert_eq!(
        store.len(),
        SWEEP_EVERY - 3,
        "three finished requests dropped"
    );
    for id in [&consumed.id, &rejected.id, &expired.id] {
        assert!(store.get(id).await.unwrap().is_none());
    }
    assert_eq!(
        store
            .consume(&consumed.id, later)
            .await
            .unwrap()
            .unwrap_err(),
        ConsumeRefusal::NotFound
    );
    let kept = store.get(&approved_late.id).await.unwrap().unwrap();
    assert_eq!(kept.effective_status(later), EffectiveStatus::Approved);
    // carol's expired request no longer counts against her.
    store
        .create(&request_at("a.b", Some("carol"), later, 60_000))
        .await
        .unwrap();
}
