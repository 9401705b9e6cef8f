#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The SQLite store on a disk that fills up (issue 15, items 1 and 2): a
//! real filesystem, a small tmpfs mounted for the test, filled by a file
//! until the kernel answers ENOSPC. No mock of the store or of SQLite.
//!
//! The rule under test: a state change that is not durably committed fails
//! with a typed store error, so a consume that did not commit never lets a
//! handler run, and a single-use approval runs at most once.
//!
//! Mounting needs root (CI and this project's machines run as root); the
//! test fails, saying so, where it cannot mount.

use crate::pipeline_support;
use crate::suite;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use orpc_agent_core::approval::BoxFuture;
use orpc_agent_core::approval::{
    ApprovalStatus, ApprovalStore, BackendErrorKind, ConsumeRefusal, Decision, SqliteApprovalStore,
    StoreError,
};
use orpc_agent_core::pipeline::Outcome;
use orpc_agent_core::pipeline::driver::{Call, Driver, Handler, HandlerContext, HandlerError};
use orpc_agent_core::{Actor, ErrorCode, Frame, Surface};
use pipeline_support::{error_of, ok_json, registry};
use serde_json::{Value, json};
use suite::{T0, created, request_at};

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
struct SmallDisk {
    dir: PathBuf,
}

impl SmallDisk {
    fn mount(size: &str) -> SmallDisk {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "orpc-small-disk-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .expect("running mount");
        assert!(
            out.status.success(),
            "cannot mount a tmpfs for the full-disk tests (they need root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        SmallDisk { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes a filler file until the filesystem is full; returns its path.
    fn fill(&self) -> PathBuf {
        let filler = self.path("filler");
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&filler)
            .unwrap();
        let block = vec![0u8; 4096];
        loop {
            match f.write(&block) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc_enospc()) => break,
                Err(e) => panic!("filling the disk: {e}"),
            }
        }
        // Byte by byte, the last partial block.
        while f.write(&[0u8]).is_ok_and(|n| n == 1) {}
        drop(f);
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// ENOSPC on Linux.
fn libc_enospc() -> i32 {
    28
}

fn backend_kind(e: &StoreError) -> Option<BackendErrorKind> {
    match e {
        StoreError::Backend { kind, .. } => Some(*kind),
        _ => None,
    }
}

fn open(path: &Path) -> SqliteApprovalStore {
    SqliteApprovalStore::open(path).unwrap()
}

/// Fresh approved requests on a store reopened with every journal
/// settled, so the next write must create or grow a file. (The store uses a
/// rollback journal; the WAL checkpoint is a no-op there and settles a
/// database an older version left in WAL.)
async fn approved_and_reopened(path: &Path, n: usize) -> (SqliteApprovalStore, Vec<String>) {
    let store = open(path);
    let mut ids = Vec::new();
    for i in 0..n {
        let req = created(
            &store,
            request_at("orders.refund", Some("ana"), T0 + i as u64, 3_600_000),
        )
        .await;
        store
            .decide(
                &req.id,
                Decision::Approve,
                Some("boss"),
                None,
                T0 + 100,
                false,
            )
            .await
            .unwrap();
        ids.push(req.id);
    }
    drop(store);
    {
        let raw = rusqlite::Connection::open(path).unwrap();
        raw.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
    }
    (open(path), ids)
}

/// The disk fills between approval and resume: the consume cannot commit,
/// so it is a typed I/O error, and the request stays approved; once there
/// is room again it is consumed exactly once.
#[tokio::test]
async fn a_consume_that_cannot_commit_fails_typed_and_the_approval_runs_once() {
    let disk = SmallDisk::mount("1m");
    let db = disk.path("approvals.db");
    let (store, ids) = approved_and_reopened(&db, 3).await;
    let filler = disk.fill();

    for attempt in 0..4 {
        let got = store.consume(&ids[0], T0 + 200).await;
        let err = got.expect_err(&format!(
            "attempt {attempt}: a consume on a full disk reported success"
        ));
        assert_eq!(
            backend_kind(&err),
            Some(BackendErrorKind::Io),
            "attempt {attempt}: {err:?}"
        );
    }
    std::fs::remove_file(&filler).unwrap();
    drop(store);

    // Nothing committed was lost, and the failed consumes left no trace.
    let again = open(&db);
    for id in &ids {
        let r = again.get(id).await.unwrap().expect("still stored");
        assert_eq!(r.status, ApprovalStatus::Approved, "{id}");
    }
    // Once there is room the approval is consumed exactly once. One CI run
    // saw the first consume after the disk was freed fail with a typed
    // "disk is full" (not reproduced in 200 runs here, loaded or not):
    // allow two such typed failures, each leaving the request approved.
    let mut consumed = None;
    for attempt in 0..3 {
        match again.consume(&ids[0], T0 + 300).await {
            Ok(result) => {
                consumed = Some(result);
                break;
            }
            Err(e) => {
                assert_eq!(
                    backend_kind(&e),
                    Some(BackendErrorKind::Io),
                    "{attempt}: {e:?}"
                );
                let r = again.get(&ids[0]).await.unwrap().expect("still stored");
                assert_eq!(r.status, ApprovalStatus::Approved);
            }
        }
    }
    assert!(
        consumed.expect("consumed once there was room").is_ok(),
        "the approved request is consumed"
    );
    assert_eq!(
        again.consume(&ids[0], T0 + 301).await.unwrap(),
        Err(ConsumeRefusal::AlreadyConsumed)
    );
}

/// Every other state change on a full disk is a typed error too, and
/// nothing already committed is lost: create, decide.
#[tokio::test]
async fn create_and_decide_on_a_full_disk_fail_typed_and_lose_nothing() {
    let disk = SmallDisk::mount("1m");
    let db = disk.path("approvals.db");
    let (store, ids) = approved_and_reopened(&db, 2).await;
    let pending = created(
        &store,
        request_at("orders.refund", Some("bo"), T0, 3_600_000),
    )
    .await;
    drop(store);
    {
        let raw = rusqlite::Connection::open(&db).unwrap();
        raw.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
    }
    let store = open(&db);
    let filler = disk.fill();

    let fresh = request_at("orders.refund", Some("cy"), T0 + 5, 3_600_000);
    let err = store.create(&fresh).await.unwrap_err();
    assert_eq!(backend_kind(&err), Some(BackendErrorKind::Io), "{err:?}");
    let err = store
        .decide(
            &pending.id,
            Decision::Approve,
            Some("boss"),
            None,
            T0 + 6,
            false,
        )
        .await
        .unwrap_err();
    assert_eq!(backend_kind(&err), Some(BackendErrorKind::Io), "{err:?}");

    std::fs::remove_file(&filler).unwrap();
    let again = open(&db);
    assert!(again.get(&fresh.id).await.unwrap().is_none(), "not created");
    assert_eq!(
        again.get(&pending.id).await.unwrap().unwrap().status,
        ApprovalStatus::Pending,
        "not decided"
    );
    for id in &ids {
        assert_eq!(
            again.get(id).await.unwrap().unwrap().status,
            ApprovalStatus::Approved
        );
    }
    drop(store);
}

/// Counts its runs.
struct Counting(AtomicU32);

impl Handler for Counting {
    fn call<'a>(
        &'a self,
        input: &'a Value,
        _cx: HandlerContext<'a>,
    ) -> BoxFuture<'a, Result<Value, HandlerError>> {
        Box::pin(async move {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"refunded": input["orderId"]}))
        })
    }
}

/// Through the pipeline: a resume whose consume cannot commit is INTERNAL
/// `{store: "io"}` before any handler runs, however often it is tried; once
/// the disk has room the approval runs exactly once.
#[tokio::test]
async fn a_resume_on_a_full_disk_runs_no_handler_and_the_approval_runs_once() {
    let disk = SmallDisk::mount("1m");
    let db = disk.path("approvals.db");
    let caps = registry(
        json!([{"id": "orders.refund", "meta": {"description": "Refund.", "expose": {"mcp": true},
            "sideEffect": "write", "risk": "high", "approval": {"required": true}}}]),
        Value::Null,
    );
    let handler = Arc::new(Counting(AtomicU32::new(0)));
    let driver = |store: SqliteApprovalStore| {
        Driver::builder(Arc::clone(&caps), Arc::new(store))
            .clock_base_unix_ms(1_000_000)
            .handler("orders.refund", handler.clone())
            .build()
            .unwrap()
    };
    let frame = || {
        Frame::new(Surface::Mcp).with_actor(Actor {
            id: Some("agent-1".into()),
            ..Actor::default()
        })
    };
    let d = driver(open(&db));
    let o = d
        .invoke(
            "orders.refund",
            json!({"orderId": "o-1"}),
            Call::new(frame()),
        )
        .await;
    let Outcome::ApprovalRequired(req) = o else {
        panic!("{o:?}")
    };
    d.decide(&req.id, Decision::Approve, Some("boss"), None)
        .await
        .unwrap();
    drop(d);
    {
        let raw = rusqlite::Connection::open(&db).unwrap();
        raw.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
    }
    let d = driver(open(&db));
    let filler = disk.fill();
    for attempt in 0..4 {
        let o = d.resume(&req.id, Call::new(frame())).await;
        let e = error_of(&o);
        assert_eq!(e.code, ErrorCode::Internal, "attempt {attempt}: {o:?}");
        assert_eq!(e.details, Some(json!({"store": "io"})), "attempt {attempt}");
        assert_eq!(
            handler.0.load(Ordering::SeqCst),
            0,
            "attempt {attempt}: a handler ran"
        );
    }
    std::fs::remove_file(&filler).unwrap();
    let o = d.resume(&req.id, Call::new(frame())).await;
    assert_eq!(ok_json(&o), &json!({"refunded": "o-1"}));
    let again = d.resume(&req.id, Call::new(frame())).await;
    assert_eq!(error_of(&again).code, ErrorCode::ApprovalConsumed);
    assert_eq!(
        handler.0.load(Ordering::SeqCst),
        1,
        "the approval ran exactly once"
    );
}
