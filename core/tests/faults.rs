#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Fault injection through the tokio driver and the SQLite store (issue
//! 10, item 4). Every fault ends in a typed error or a documented
//! degradation (docs/decisions.md, "Hardening (issue 10)"); no handler
//! runs twice; no unredacted data is emitted. Handler outputs carry
//! [`SECRET`], which every redactor here removes, and every error and audit
//! record is searched for it.

use crate::pipeline_support;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use orpc_agent_core::approval::{
    ApprovalStore, BoxFuture, Decision as ApprovalDecision, SqliteApprovalStore, SqliteOptions,
};
use orpc_agent_core::pipeline::driver::{
    AppContext, AuditSink, Call, Driver, Handler, HandlerContext, HandlerError, Policy,
    PolicyRequest, Redactor, Validator,
};
use orpc_agent_core::pipeline::{AuditRecord, Decision, Outcome, RedactionInfo};
use orpc_agent_core::{Actor, CapabilityRegistry, ErrorCode, Frame, Surface};
use pipeline_support::*;
use serde_json::{Value, json};

const SECRET: &str = "SENTINEL-faults-4f2a-unredacted";

/// A handler that returns the secret, or never settles (pending forever,
/// or spinning on `yield_now` while ignoring its cancellation token).
struct Probe {
    calls: AtomicU32,
    mode: Mode,
}

#[derive(Clone, Copy)]
enum Mode {
    ReturnSecret,
    Pending,
    SpinIgnoringCancel,
    /// Panics (quoting the secret): a Rust host's thrown error.
    Panics,
}

impl Probe {
    fn new(mode: Mode) -> Arc<Probe> {
        Arc::new(Probe {
            calls: AtomicU32::new(0),
            mode,
        })
    }
    fn calls(&self) -> u32 {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Handler for Probe {
    fn call<'a>(
        &'a self,
        _input: &'a Value,
        cx: HandlerContext<'a>,
    ) -> BoxFuture<'a, Result<Value, HandlerError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            match self.mode {
                Mode::ReturnSecret => Ok(json!({"token": SECRET, "ok": true})),
                Mode::Pending => std::future::pending().await,
                Mode::SpinIgnoringCancel => loop {
                    // Sees the cancellation and carries on regardless.
                    let _ = cx.cancel.is_cancelled();
                    tokio::task::yield_now().await;
                },
                Mode::Panics => panic!("handler crashed on {SECRET}"),
            }
        })
    }
}

/// An output redactor that removes `token` — or never finishes.
struct Redact {
    hang: Option<Mode>,
}

impl Redactor for Redact {
    fn redact<'a>(
        &'a self,
        value: &'a Value,
        _info: RedactionInfo<'a>,
        _cx: Option<&'a AppContext>,
    ) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move {
            match self.hang {
                Some(Mode::Pending) => std::future::pending().await,
                Some(Mode::Panics) => panic!("redactor crashed on {SECRET}"),
                Some(_) => loop {
                    tokio::task::yield_now().await;
                },
                None => {
                    let mut v = value.clone();
                    v["token"] = json!("[redacted]");
                    Ok(v)
                }
            }
        })
    }
}

/// A host policy that throws (quoting the secret), hangs, or panics.
struct BadPolicy {
    hang: bool,
    panics: bool,
}

impl Policy for BadPolicy {
    fn evaluate<'a>(&'a self, _r: PolicyRequest<'a>) -> BoxFuture<'a, Result<Decision, String>> {
        Box::pin(async move {
            if self.panics {
                panic!("policy crashed on {SECRET}")
            } else if self.hang {
                std::future::pending().await
            } else {
                Err(format!("policy crashed on {SECRET}"))
            }
        })
    }
}

/// An audit subscriber that panics, or blocks its thread, or collects.
struct Sink {
    fault: SinkFault,
    records: std::sync::Mutex<Vec<AuditRecord>>,
}

#[derive(Clone, Copy)]
enum SinkFault {
    None,
    Panics,
    Blocks(u64),
}

impl AuditSink for Sink {
    fn record(&self, record: &AuditRecord) {
        match self.fault {
            SinkFault::Panics => panic!("audit backend is down"),
            SinkFault::Blocks(ms) => std::thread::sleep(Duration::from_millis(ms)),
            SinkFault::None => {}
        }
        self.records.lock().unwrap().push(record.clone());
    }
}

impl Sink {
    /// The outcome of each finished record delivered so far, in order.
    fn outcomes(&self) -> Vec<&'static str> {
        self.records
            .lock()
            .unwrap()
            .iter()
            .filter_map(|r| r.outcome)
            .collect()
    }
}

fn sink(fault: SinkFault) -> Arc<Sink> {
    Arc::new(Sink {
        fault,
        records: std::sync::Mutex::new(Vec::new()),
    })
}

fn caps(extra: Value) -> Arc<CapabilityRegistry> {
    let write = with(
        json!({"description": "Write.", "expose": {"mcp": true}, "sideEffect": "write",
               "risk": "medium", "timeoutMs": 200, "redact": {"output": true}}),
        extra,
    );
    registry(json!([{"id": "orders.cancel", "meta": write}]), Value::Null)
}

fn frame() -> Frame {
    Frame::new(Surface::Mcp).with_actor(Actor {
        id: Some("agent-1".into()),
        ..Actor::default()
    })
}

/// Nothing the caller or the audit trail sees holds the secret.
fn assert_no_secret(o: &Outcome, audit: &Sink) {
    let shown = match o {
        Outcome::Error(e) => e.to_json().to_string(),
        Outcome::Ok(p) => format!("{p:?}"),
        Outcome::ApprovalRequired(r) => format!("{r:?}"),
    };
    assert!(!shown.contains(SECRET), "outcome leaks: {shown}");
    for r in audit.records.lock().unwrap().iter() {
        let j = r.to_json().to_string();
        assert!(!j.contains(SECRET), "audit record leaks: {j}");
    }
}

fn build(
    reg: &Arc<CapabilityRegistry>,
    handler: Arc<Probe>,
    redactor: Redact,
    audit: Arc<Sink>,
) -> Driver {
    builder(reg)
        .handler("orders.cancel", handler)
        .redact_output("orders.cancel", Arc::new(redactor))
        .audit(audit, true)
        .build()
        .unwrap()
}

/// `build` with a host policy at index 0 (and no hanging redactor).
fn build_with_policy(
    reg: &Arc<CapabilityRegistry>,
    handler: Arc<Probe>,
    policy: BadPolicy,
    audit: Arc<Sink>,
) -> Driver {
    builder(reg)
        .handler("orders.cancel", handler)
        .redact_output("orders.cancel", Arc::new(Redact { hang: None }))
        .policy("orders.cancel", 0, Arc::new(policy))
        .audit(audit, true)
        .build()
        .unwrap()
}

async fn timed<F: Future>(f: F) -> (F::Output, Duration) {
    let t = tokio::time::Instant::now();
    let out = f.await;
    (out, t.elapsed())
}

// ----- handlers that never settle --------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_handler_that_never_settles_times_out_at_the_deadline_once() {
    // Even with retries declared (idempotent write): the deadline is spent.
    let reg = caps(json!({"idempotent": true, "retry": {"maxAttempts": 3, "backoffMs": 1}}));
    let h = Probe::new(Mode::Pending);
    let audit = sink(SinkFault::None);
    let d = build(&reg, h.clone(), Redact { hang: None }, audit.clone());
    let (o, took) = timed(d.invoke("orders.cancel", json!({}), Call::new(frame()))).await;
    assert_eq!(error_of(&o).code, ErrorCode::Timeout);
    assert_eq!(took, Duration::from_millis(200));
    assert_eq!(h.calls(), 1, "a timed-out write is not run again");
    assert_no_secret(&o, &audit);
}

/// Real time: a spinning handler keeps the runtime busy, so a paused clock
/// would never advance. The driver drops the handler's future at the
/// deadline; the handler never sees a chance to deliver late.
#[tokio::test]
async fn a_handler_that_ignores_its_cancellation_is_dropped_at_the_deadline() {
    // A deadline a loaded machine still starts the handler before.
    let reg = caps(json!({"timeoutMs": 400}));
    let h = Probe::new(Mode::SpinIgnoringCancel);
    let audit = sink(SinkFault::None);
    let d = build(&reg, h.clone(), Redact { hang: None }, audit.clone());
    let (o, took) = timed(d.invoke("orders.cancel", json!({}), Call::new(frame()))).await;
    assert_eq!(error_of(&o).code, ErrorCode::Timeout);
    assert!(took < Duration::from_millis(2_000), "{took:?}");
    assert_eq!(h.calls(), 1);
    assert_eq!(audit.outcomes(), ["TIMEOUT"]);
}

// ----- redactors that never finish ---------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_redactor_that_never_finishes_is_bounded_by_the_deadline() {
    let reg = caps(json!({}));
    let h = Probe::new(Mode::ReturnSecret);
    let audit = sink(SinkFault::None);
    let d = build(
        &reg,
        h.clone(),
        Redact {
            hang: Some(Mode::Pending),
        },
        audit.clone(),
    );
    let (o, took) = timed(d.invoke("orders.cancel", json!({}), Call::new(frame()))).await;
    let e = error_of(&o);
    // The deadline's TIMEOUT, as in every binding (the machine's answer to
    // `DeadlinePassed`); the unredacted output goes nowhere.
    assert_eq!(e.code, ErrorCode::Timeout);
    assert!(!e.retryable, "the write ran: a retry could run it twice");
    assert_eq!(
        took,
        Duration::from_millis(200),
        "bounded by the 200 ms deadline"
    );
    assert_eq!(h.calls(), 1);
    assert_eq!(audit.outcomes(), ["TIMEOUT"]);
    assert_no_secret(&o, &audit);
}

#[tokio::test]
async fn a_redactor_that_spins_is_bounded_by_the_deadline() {
    // A deadline a loaded machine still starts the handler before.
    let reg = caps(json!({"timeoutMs": 400}));
    let h = Probe::new(Mode::ReturnSecret);
    let audit = sink(SinkFault::None);
    let spin = Redact {
        hang: Some(Mode::SpinIgnoringCancel),
    };
    let d = build(&reg, h.clone(), spin, audit.clone());
    let (o, took) = timed(d.invoke("orders.cancel", json!({}), Call::new(frame()))).await;
    assert_eq!(error_of(&o).code, ErrorCode::Timeout);
    assert!(took < Duration::from_millis(2_000), "{took:?}");
    assert_eq!(h.calls(), 1);
    assert_no_secret(&o, &audit);
}

// ----- validators that never finish -------------------------------------------

/// A validator that never finishes.
struct PendingValidator;

impl Validator for PendingValidator {
    fn validate<'a>(&'a self, _value: &'a Value) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test(start_paused = true)]
async fn a_validator_that_never_finishes_is_the_deadlines_timeout() {
    // The input validator runs before the handler (which never starts);
    // the output validator after it (its output goes nowhere). Both are
    // bounded by the call's deadline, 200 ms after the start.
    for (input, output) in [(true, false), (false, true)] {
        let reg = registry(
            json!([{"id": "orders.cancel", "validateInput": input, "validateOutput": output,
                    "meta": {"description": "Write.", "expose": {"mcp": true}, "sideEffect": "write",
                             "risk": "medium", "timeoutMs": 200}}]),
            Value::Null,
        );
        let h = Probe::new(Mode::ReturnSecret);
        let audit = sink(SinkFault::None);
        let mut b = builder(&reg)
            .handler("orders.cancel", h.clone())
            .audit(audit.clone(), true);
        b = if input {
            b.input_validator("orders.cancel", Arc::new(PendingValidator))
        } else {
            b.output_validator("orders.cancel", Arc::new(PendingValidator))
        };
        let d = b.build().unwrap();
        let (o, took) = timed(d.invoke("orders.cancel", json!({}), Call::new(frame()))).await;
        assert_eq!(error_of(&o).code, ErrorCode::Timeout, "input={input}");
        assert_eq!(took, Duration::from_millis(200), "input={input}");
        assert_eq!(h.calls(), u32::from(output), "input={input}");
        assert_eq!(audit.outcomes(), ["TIMEOUT"], "input={input}");
        assert_no_secret(&o, &audit);
    }
}

// ----- host policies -----------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_host_policy_that_throws_or_hangs_denies() {
    for hang in [false, true] {
        let reg = caps(json!({"policies": [{"name": "tenant", "host": true}]}));
        let h = Probe::new(Mode::ReturnSecret);
        let audit = sink(SinkFault::None);
        let policy = BadPolicy {
            hang,
            panics: false,
        };
        let d = build_with_policy(&reg, h.clone(), policy, audit.clone());
        let (o, took) = timed(d.invoke("orders.cancel", json!({}), Call::new(frame()))).await;
        let e = error_of(&o);
        assert_eq!(e.code, ErrorCode::PolicyDenied, "hang={hang}");
        assert!(
            !e.message.contains("crashed"),
            "the policy's own message stays out"
        );
        assert_eq!(took, Duration::from_millis(if hang { 200 } else { 0 }));
        assert_eq!(h.calls(), 0);
        assert_no_secret(&o, &audit);
        let rec = audit.records.lock().unwrap().last().unwrap().to_json();
        assert_eq!(rec["policies"][0]["failed"], true, "{rec}");
    }
}

// ----- hooks that panic ---------------------------------------------------------

/// A Rust host's thrown error is a panic: a handler, redactor or host policy
/// that panics ends its call as a throwing one does in the other bindings
/// (EXECUTION_FAILED, the output dropped, a failed policy that denies),
/// audited once, never unwinding through the caller; nothing runs twice.
#[tokio::test]
async fn a_hook_that_panics_ends_its_call_as_a_thrown_one() {
    let reg = caps(json!({"idempotent": true, "retry": {"maxAttempts": 3, "backoffMs": 1}}));
    let h = Probe::new(Mode::Panics);
    let audit = sink(SinkFault::None);
    let d = build(&reg, h.clone(), Redact { hang: None }, audit.clone());
    let o = d
        .invoke("orders.cancel", json!({}), Call::new(frame()))
        .await;
    assert_eq!(error_of(&o).code, ErrorCode::ExecutionFailed);
    assert_eq!(h.calls(), 1, "a panic is not retryable");
    assert_no_secret(&o, &audit);
    assert_eq!(audit.outcomes(), ["EXECUTION_FAILED"]);

    let h = Probe::new(Mode::ReturnSecret);
    let audit = sink(SinkFault::None);
    let d = build(
        &reg,
        h.clone(),
        Redact {
            hang: Some(Mode::Panics),
        },
        audit.clone(),
    );
    let o = d
        .invoke("orders.cancel", json!({}), Call::new(frame()))
        .await;
    assert_eq!(error_of(&o).code, ErrorCode::ExecutionFailed);
    assert_no_secret(&o, &audit);
    assert_eq!(audit.outcomes(), ["EXECUTION_FAILED"]);

    let reg = caps(json!({"policies": [{"name": "tenant", "host": true}]}));
    let h = Probe::new(Mode::ReturnSecret);
    let audit = sink(SinkFault::None);
    let policy = BadPolicy {
        hang: false,
        panics: true,
    };
    let d = build_with_policy(&reg, h.clone(), policy, audit.clone());
    let o = d
        .invoke("orders.cancel", json!({}), Call::new(frame()))
        .await;
    assert_eq!(error_of(&o).code, ErrorCode::PolicyDenied);
    assert_eq!(h.calls(), 0);
    assert_no_secret(&o, &audit);
    assert_eq!(audit.outcomes(), ["POLICY_DENIED"]);
}

/// The two hooks a Rust host's panic used to unwind through the caller:
/// a `retryOn` predicate that panics does not retry (as a throwing one in
/// every binding), and an approval-input redactor that panics gives the
/// approval UI EXECUTION_FAILED, never the input.
#[tokio::test]
async fn a_retry_predicate_or_approval_view_redactor_that_panics_is_a_throwing_one() {
    let reg = caps(
        json!({"idempotent": true, "retry": {"maxAttempts": 3, "backoffMs": 1, "retryOn": true}}),
    );
    let h = Fixture::new(Behaviour::FailWithCode {
        code: ErrorCode::ExecutionFailed,
        retryable: true,
        details: None,
    });
    let d = builder(&reg)
        .handler("orders.cancel", h.clone())
        .redact_output("orders.cancel", Arc::new(Redact { hang: None }))
        .retry_on(
            "orders.cancel",
            Arc::new(|_| panic!("retryOn crashed on {SECRET}")),
        )
        .build()
        .unwrap();
    let o = d
        .invoke("orders.cancel", json!({}), Call::new(frame()))
        .await;
    assert_eq!(error_of(&o).code, ErrorCode::ExecutionFailed);
    assert_eq!(h.calls(), 1, "a panicking predicate does not retry");

    let (d, req) = gated_with_approval_redactor(json!({}), Mode::Panics).await;
    let e = d.redact_approval_input(&req, None).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::ExecutionFailed);
    assert!(!e.to_json().to_string().contains(SECRET));
}

// ----- audit subscribers -------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn an_audit_subscriber_that_panics_loses_its_records_and_nothing_else() {
    let reg = caps(json!({}));
    let h = Probe::new(Mode::ReturnSecret);
    let audit = sink(SinkFault::Panics);
    let d = build(&reg, h.clone(), Redact { hang: None }, audit.clone());
    for n in 1..=2 {
        let o = d
            .invoke("orders.cancel", json!({}), Call::new(frame()))
            .await;
        assert_eq!(ok_json(&o)["token"], "[redacted]");
        assert_eq!(h.calls(), n, "each call runs its handler exactly once");
    }
    assert!(audit.records.lock().unwrap().is_empty());
}

/// A subscriber that blocks delays the call by as long as it blocks (it
/// runs on the invocation's thread) and spends the deadline doing so: the
/// handler is not started past it. Documented: sinks must not block.
#[tokio::test]
async fn an_audit_subscriber_that_blocks_delays_the_call_and_spends_its_deadline() {
    let reg = caps(json!({"timeoutMs": 1_000}));
    let h = Probe::new(Mode::ReturnSecret);
    let audit = sink(SinkFault::Blocks(30));
    let d = build(&reg, h.clone(), Redact { hang: None }, audit.clone());
    let (o, took) = timed(d.invoke("orders.cancel", json!({}), Call::new(frame()))).await;
    assert_eq!(ok_json(&o)["token"], "[redacted]");
    assert!(
        took >= Duration::from_millis(60),
        "started + finished: {took:?}"
    );
    assert_eq!(h.calls(), 1);
    assert_no_secret(&o, &audit);

    let reg = caps(json!({"timeoutMs": 20}));
    let h = Probe::new(Mode::ReturnSecret);
    let audit = sink(SinkFault::Blocks(50));
    let d = build(&reg, h.clone(), Redact { hang: None }, audit.clone());
    let o = d
        .invoke("orders.cancel", json!({}), Call::new(frame()))
        .await;
    assert_eq!(error_of(&o).code, ErrorCode::Timeout);
    assert_eq!(h.calls(), 0, "not started once its deadline passed");
}

// ----- the SQLite store --------------------------------------------------------

struct TempDb(PathBuf);

impl TempDb {
    fn new(name: &str) -> TempDb {
        let dir = std::env::temp_dir().join(format!("orpc-faults-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDb(dir.join("approvals.db"))
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn approval_caps() -> Arc<CapabilityRegistry> {
    caps(json!({"approval": {"required": true}}))
}

fn sqlite(path: &std::path::Path) -> Arc<dyn ApprovalStore> {
    let opts = SqliteOptions {
        busy_timeout: Duration::from_millis(50),
        ..SqliteOptions::default()
    };
    Arc::new(SqliteApprovalStore::open_with(path, opts).unwrap())
}

/// A request for `orders.cancel` made through `d` and approved by `boss`.
async fn approved_request(d: &Driver) -> orpc_agent_core::approval::ApprovalRequest {
    let Outcome::ApprovalRequired(req) = d
        .invoke("orders.cancel", json!({"id": "o-1"}), Call::new(frame()))
        .await
    else {
        panic!("expected an approval request")
    };
    d.decide(&req.id, ApprovalDecision::Approve, Some("boss"), None)
        .await
        .unwrap();
    *req
}

fn driver_on(store: Arc<dyn ApprovalStore>, h: Arc<Probe>, audit: Arc<Sink>) -> Driver {
    Driver::builder(approval_caps(), store)
        .clock_base_unix_ms(1_000_000)
        .handler("orders.cancel", h)
        .redact_output("orders.cancel", Arc::new(Redact { hang: None }))
        .audit(audit, true)
        .build()
        .unwrap()
}

/// Another process's connection holding SQLite's write lock (`BEGIN
/// EXCLUSIVE`) until dropped, opened with the same bundled SQLite the core
/// links.
struct HeldLock(#[allow(dead_code)] rusqlite::Connection);

fn lock_exclusively(path: &std::path::Path) -> HeldLock {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch("BEGIN EXCLUSIVE").unwrap();
    HeldLock(c)
}

#[tokio::test]
async fn a_locked_sqlite_store_fails_typed_and_loses_no_approval() {
    let db = TempDb::new("locked");
    let store = sqlite(&db.0);
    let h = Probe::new(Mode::ReturnSecret);
    let audit = sink(SinkFault::None);
    let d = driver_on(Arc::clone(&store), h.clone(), audit.clone());

    // Creating a request while another connection holds the lock.
    let held = lock_exclusively(&db.0);
    let o = d
        .invoke("orders.cancel", json!({"id": "o-1"}), Call::new(frame()))
        .await;
    let e = error_of(&o);
    assert_eq!(e.code, ErrorCode::Internal);
    assert!(e.retryable, "busy is worth retrying");
    assert_eq!(e.details, Some(json!({"store": "busy"})));
    assert!(
        !e.message.contains("approvals.db"),
        "no file path in the message"
    );
    drop(held);

    // A request made and approved; resumed while the store is locked.
    let o = d
        .invoke("orders.cancel", json!({"id": "o-1"}), Call::new(frame()))
        .await;
    let Outcome::ApprovalRequired(req) = o else {
        panic!("{o:?}")
    };
    d.decide(&req.id, ApprovalDecision::Approve, Some("boss"), None)
        .await
        .unwrap();
    let held = lock_exclusively(&db.0);
    let o = d.resume(&req.id, Call::new(frame())).await;
    assert_eq!(error_of(&o).code, ErrorCode::Internal);
    assert_eq!(h.calls(), 0, "no handler without a consumed approval");
    drop(held);

    // The approval survived the failed attempt: it runs once, then never again.
    let o = d.resume(&req.id, Call::new(frame())).await;
    assert_eq!(ok_json(&o)["token"], "[redacted]");
    let again = d.resume(&req.id, Call::new(frame())).await;
    assert_eq!(error_of(&again).code, ErrorCode::ApprovalConsumed);
    assert_eq!(h.calls(), 1, "an approved write runs exactly once");
    assert_no_secret(&o, &audit);
}

/// A caller cancelled before its resume starts (a dropped request's
/// token) consumes nothing: a consumed approval whose action never ran is
/// the one outcome a resume must not have.
#[tokio::test]
async fn a_resume_by_a_caller_already_cancelled_consumes_nothing() {
    let db = TempDb::new("cancelled-resume");
    let h = Probe::new(Mode::ReturnSecret);
    let audit = sink(SinkFault::None);
    let d = driver_on(sqlite(&db.0), h.clone(), audit.clone());
    let req = approved_request(&d).await;
    let call = Call::new(frame());
    call.cancel.cancel();
    let o = d.resume(&req.id, call).await;
    assert_eq!(error_of(&o).code, ErrorCode::Cancelled);
    assert_eq!(h.calls(), 0);
    let o = d.resume(&req.id, Call::new(frame())).await;
    assert_eq!(ok_json(&o)["token"], "[redacted]");
    assert_eq!(h.calls(), 1, "the approval ran once, on the later resume");
}

/// A repeated MCP call by a caller already cancelled (a client that
/// cancelled while the app's frame factory ran) finds its approved
/// request but consumes nothing and runs nothing: the approval stays for
/// the caller's next call, which runs it once.
#[tokio::test]
async fn a_repeated_call_by_a_caller_already_cancelled_consumes_nothing() {
    let db = TempDb::new("cancelled-repeat");
    let h = Probe::new(Mode::ReturnSecret);
    let audit = sink(SinkFault::None);
    let d = driver_on(sqlite(&db.0), h.clone(), audit.clone());
    let req = approved_request(&d).await;
    let call = Call::new(frame());
    call.cancel.cancel();
    let o = d.invoke("orders.cancel", json!({"id": "o-1"}), call).await;
    assert_eq!(error_of(&o).code, ErrorCode::Cancelled);
    assert_eq!(h.calls(), 0);
    let fresh = Call::new(frame());
    fresh.cancel.cancel();
    let o = d.invoke("orders.cancel", json!({"id": "o-9"}), fresh).await;
    assert_eq!(
        error_of(&o).code,
        ErrorCode::Cancelled,
        "nothing stored either"
    );
    let o = d
        .invoke("orders.cancel", json!({"id": "o-1"}), Call::new(frame()))
        .await;
    assert_eq!(ok_json(&o)["token"], "[redacted]");
    assert_eq!(h.calls(), 1, "the approval ran once, on the later call");
    let _ = req;
}

#[tokio::test]
async fn a_read_only_sqlite_store_fails_typed_and_runs_nothing() {
    let db = TempDb::new("readonly");
    // Make a request and approve it on a writable store first.
    let writable = sqlite(&db.0);
    let h = Probe::new(Mode::ReturnSecret);
    let d = driver_on(writable, h.clone(), sink(SinkFault::None));
    let req = approved_request(&d).await;
    drop(d);

    // The same file, read-only (as on a read-only file system).
    let uri = format!("file:{}?mode=ro", db.0.display());
    let ro = SqliteApprovalStore::open(&uri).expect("a read-only database still opens");
    let audit = sink(SinkFault::None);
    let d = driver_on(Arc::new(ro), h.clone(), audit.clone());
    let o = d
        .invoke("orders.cancel", json!({"id": "o-2"}), Call::new(frame()))
        .await;
    let e = error_of(&o);
    assert_eq!(
        (e.code, e.details.clone()),
        (ErrorCode::Internal, Some(json!({"store": "read-only"})))
    );
    let o = d.resume(&req.id, Call::new(frame())).await;
    let e = error_of(&o);
    assert_eq!(
        (e.code, e.details.clone()),
        (ErrorCode::Internal, Some(json!({"store": "read-only"})))
    );
    assert_eq!(
        h.calls(),
        0,
        "a consume that cannot be recorded runs nothing"
    );
    assert_no_secret(&o, &audit);
}

#[test]
fn a_sqlite_store_that_cannot_be_created_is_a_typed_error() {
    let e = SqliteApprovalStore::open("/proc/orpc-agent-no-such-dir/approvals.db").unwrap_err();
    let ce = e.to_capability_error();
    assert_eq!(ce.code, ErrorCode::Internal);
    assert_eq!(ce.details, Some(json!({"store": "cannot-open"})));
}

/// An approval-input redactor that never finishes holds no approval UI:
/// past the capability's timeout (the core's bound, as for its other
/// hooks) the view is EXECUTION_FAILED, as for one that fails.
#[tokio::test(start_paused = true)]
async fn an_approval_input_redactor_that_never_finishes_fails_the_view_at_the_timeout() {
    let (d, req) = gated_with_approval_redactor(json!({"timeoutMs": 300}), Mode::Pending).await;
    let (view, took) = timed(d.redact_approval_input(&req, None)).await;
    assert_eq!(view.unwrap_err().code, ErrorCode::ExecutionFailed);
    assert_eq!(
        took,
        Duration::from_millis(300),
        "bounded by the capability's timeout"
    );
}

/// `orders.cancel` gated for approval (with `meta`'s extra fields), its
/// approval-input redactor behaving as `mode`, and the request one call of
/// it (input with the secret) made.
async fn gated_with_approval_redactor(
    meta: serde_json::Value,
    mode: Mode,
) -> (
    orpc_agent_core::pipeline::driver::Driver,
    orpc_agent_core::approval::ApprovalRequest,
) {
    let mut m =
        json!({"approval": {"required": true}, "redact": {"output": true, "approvalInput": true}});
    if let (Some(m), Some(extra)) = (m.as_object_mut(), meta.as_object()) {
        m.extend(extra.clone());
    }
    let reg = caps(m);
    let d = builder(&reg)
        .handler("orders.cancel", Probe::new(Mode::ReturnSecret))
        .redact_output("orders.cancel", Arc::new(Redact { hang: None }))
        .redact_approval_input("orders.cancel", Arc::new(Redact { hang: Some(mode) }))
        .build()
        .unwrap();
    let o = d
        .invoke(
            "orders.cancel",
            json!({"id": "o-1", "token": SECRET}),
            Call::new(frame()),
        )
        .await;
    let Outcome::ApprovalRequired(req) = o else {
        panic!("{o:?}")
    };
    (d, *req)
}
