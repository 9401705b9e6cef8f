#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Secret-leak scan (issue 10, item 2; SI-10) through the tokio driver.
//!
//! A sentinel secret is put where secrets live — in handler outputs that a
//! redactor removes, in the inputs of calls that are rejected (unexposed,
//! over a limit, denied by a declarative or a throwing host policy, invalid
//! output, throwing handler or redactor), and in approval inputs — and every
//! thing the runtime emits is searched for it: the outcome (ok value or
//! error JSON), every audit record as JSON (payloads on), the trace context
//! carried out (audit fields, HTTP headers), approval views for UIs, and
//! every line the process writes to stdout/stderr while doing it (the
//! scenarios re-run in a child process whose output is captured).

use crate::pipeline_support;

use std::sync::{Arc, Mutex};

use orpc_agent_core::act::trace;
use orpc_agent_core::approval::{BoxFuture, Decision as ApprovalDecision};
use orpc_agent_core::pipeline::driver::{
    AppContext, Call, Driver, Handler, HandlerContext, HandlerError, Policy, PolicyRequest,
    Redactor, Validator,
};
use orpc_agent_core::pipeline::{AuditRecord, Decision, Outcome, RedactionInfo};
use orpc_agent_core::{Actor, CapabilityRegistry, Frame, Surface, TraceContext};
use pipeline_support::*;
use serde_json::{Value, json};

const SECRET: &str = "SENTINEL-leak-7d3e-card-4111111111111111";
const CHILD_ENV: &str = "ORPC_AGENT_LEAK_SCAN_CHILD";

/// Everything the runtime emitted during the scenarios, as text.
#[derive(Default)]
struct Emitted(Mutex<Vec<(String, String)>>);

impl Emitted {
    fn push(&self, what: &str, text: String) {
        self.0.lock().unwrap().push((what.to_owned(), text));
    }
    fn outcome(&self, what: &str, o: &Outcome) {
        self.push("code", o.code().to_owned());
        let text = match o {
            Outcome::Ok(p) => format!("{p:?}"),
            Outcome::Error(e) => format!("{} {e} {e:?}", e.to_json()),
            // The app receives the request (its stored input is the full
            // one by design, DESIGN §5); what is shown to a model is the
            // error form adapters give it, checked here.
            Outcome::ApprovalRequired(r) => format!("approval_required {} {}", r.id, r.input_hash),
        };
        self.push(what, text);
    }
}

struct Audit(Arc<Emitted>);

impl orpc_agent_core::pipeline::driver::AuditSink for Audit {
    fn record(&self, r: &AuditRecord) {
        self.0.push("audit record", r.to_json().to_string());
        self.0.push("audit record (Debug)", format!("{r:?}"));
    }
}

/// Returns its input plus a secret field; or throws quoting the secret.
struct Leaky {
    throw: bool,
}

impl Handler for Leaky {
    fn call<'a>(
        &'a self,
        input: &'a Value,
        _cx: HandlerContext<'a>,
    ) -> BoxFuture<'a, Result<Value, HandlerError>> {
        Box::pin(async move {
            if self.throw {
                let mut e = HandlerError::thrown(format!("db error near {SECRET}"));
                e.retryable = true;
                return Err(e);
            }
            Ok(json!({"echo": input, "card": SECRET}))
        })
    }
}

/// Removes every occurrence of the secret, wherever it is.
struct Scrub;

impl Redactor for Scrub {
    fn redact<'a>(
        &'a self,
        v: &'a Value,
        _i: RedactionInfo<'a>,
        _c: Option<&'a AppContext>,
    ) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move {
            let text = v.to_string().replace(SECRET, "[redacted]");
            Ok(serde_json::from_str(&text).unwrap())
        })
    }
}

/// An output validator that rejects, quoting the output.
struct Quoting;

impl Validator for Quoting {
    fn validate<'a>(&'a self, v: &'a Value) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move { Err(format!("unexpected output {v}")) })
    }
}

/// A host policy that throws, quoting the input it saw.
struct ThrowingPolicy;

impl Policy for ThrowingPolicy {
    fn evaluate<'a>(&'a self, r: PolicyRequest<'a>) -> BoxFuture<'a, Result<Decision, String>> {
        Box::pin(async move { Err(format!("cannot evaluate {}", r.input)) })
    }
}

fn base(extra: Value) -> Value {
    with(
        json!({"description": "t", "expose": {"mcp": true}, "sideEffect": "read", "risk": "low",
               "redact": {"output": true}}),
        extra,
    )
}

fn registry_for_scan() -> Arc<CapabilityRegistry> {
    registry(
        json!([
            {"id": "cards.show", "meta": base(json!({}))},
            {"id": "cards.retry", "meta": base(json!({"retry": {"maxAttempts": 2, "backoffMs": 1}}))},
            {"id": "cards.badout", "meta": base(json!({})), "validateOutput": true},
            {"id": "cards.throwredact", "meta": base(json!({}))},
            {"id": "cards.hidden", "meta": base(json!({"expose": {"direct": true}}))},
            {"id": "cards.denied", "meta": base(json!({"policies": [
                {"name": "big", "when": {"input": ["/amount > 1000"]}, "decision": "deny",
                 "reason": "Amounts over 1000 are refused."}]}))},
            {"id": "cards.hostpolicy", "meta": base(json!({"policies": [{"name": "h", "host": true}]}))},
            {"id": "cards.charge", "meta": base(json!({"sideEffect": "write",
                "approval": {"required": true}, "redact": {"output": true, "approvalInput": true}}))},
            {"id": "cards.charge2", "meta": base(json!({"sideEffect": "write",
                "approval": {"required": true}, "redact": {"output": true, "approvalInput": true}}))},
        ]),
        Value::Null,
    )
}

fn driver(reg: &Arc<CapabilityRegistry>, emitted: &Arc<Emitted>) -> Driver {
    let mut b = builder(reg).audit(Arc::new(Audit(Arc::clone(emitted))), true);
    for c in reg.capabilities() {
        let throw = c.id == "cards.retry";
        b = b.handler(&c.id, Arc::new(Leaky { throw }));
        let redactor: Arc<dyn Redactor> = if c.id == "cards.throwredact" {
            Arc::new(ThrowRedactor)
        } else {
            Arc::new(Scrub)
        };
        b = b.redact_output(&c.id, redactor);
    }
    b.output_validator("cards.badout", Arc::new(Quoting))
        .policy("cards.hostpolicy", 0, Arc::new(ThrowingPolicy))
        .redact_approval_input("cards.charge", Arc::new(Scrub))
        .redact_approval_input("cards.charge2", Arc::new(ThrowRedactor))
        .build()
        .unwrap()
}

fn frame() -> Frame {
    let mut f = Frame::new(Surface::Mcp).with_actor(Actor {
        id: Some("agent-1".into()),
        ..Actor::default()
    });
    f.trace = Some(TraceContext {
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into(),
        tracestate: Some("vendor=abc".into()),
    });
    f
}

/// Runs every scenario; returns what was emitted.
async fn scenarios() -> Arc<Emitted> {
    let emitted = Arc::new(Emitted::default());
    let reg = registry_for_scan();
    let d = driver(&reg, &emitted);
    let secret_input = json!({"amount": 5000, "card": SECRET});
    let call = || Call::new(frame());

    // Outputs a redactor removes; a throwing redactor; an output validator
    // that quotes the output; a handler that throws quoting the secret
    // (retried, then failed).
    for id in [
        "cards.show",
        "cards.throwredact",
        "cards.badout",
        "cards.retry",
    ] {
        let o = d.invoke(id, secret_input.clone(), call()).await;
        emitted.outcome(id, &o);
    }
    // Rejected calls whose input holds the secret: unexposed (SI-8), over
    // a limit (the secret is a key, and inside a too-long string), denied by
    // a declarative predicate, a host policy that throws quoting the input.
    let long = format!("{SECRET}{}", "x".repeat(70_000));
    for (id, input) in [
        ("cards.hidden", secret_input.clone()),
        ("cards.show", json!({ SECRET: 1, "pad": long })),
        ("cards.show", json!({"note": long})),
        ("cards.denied", secret_input.clone()),
        ("cards.hostpolicy", secret_input.clone()),
        ("no.such.capability", secret_input.clone()),
    ] {
        let o = d.invoke(id, input, call()).await;
        emitted.outcome(id, &o);
    }
    // Approval inputs: the request, its redacted view, a throwing view
    // redactor, a rejected request, a resumed one.
    for (id, approve) in [("cards.charge", true), ("cards.charge2", false)] {
        let o = d.invoke(id, secret_input.clone(), call()).await;
        emitted.outcome(id, &o);
        let Outcome::ApprovalRequired(req) = o else {
            panic!("{o:?}")
        };
        match d.redact_approval_input(&req, None).await {
            Ok(v) => emitted.push("approval view", v.to_string()),
            Err(e) => emitted.push("approval view error", e.to_json().to_string()),
        }
        let decision = if approve {
            ApprovalDecision::Approve
        } else {
            ApprovalDecision::Reject
        };
        let decided = d
            .decide(&req.id, decision, Some("boss"), Some("checked"))
            .await;
        match decided {
            Ok(r) => emitted.push("decided", format!("{} {:?}", r.id, r.status)),
            Err(e) => emitted.push("decide error", e.to_json().to_string()),
        }
        let o = d.resume(&req.id, call()).await;
        emitted.outcome("resume", &o);
        let again = d.resume(&req.id, call()).await;
        emitted.outcome("resume again", &again);
    }
    // The trace context a host propagates onwards.
    let tc = frame().trace.unwrap();
    emitted.push(
        "trace headers",
        format!("{:?}", trace::to_http_headers(&tc)),
    );
    emitted
}

fn assert_clean(emitted: &Emitted) {
    let all = emitted.0.lock().unwrap();
    assert!(all.len() > 30, "the scan saw too little: {}", all.len());
    for (what, text) in all.iter() {
        assert!(!text.contains(SECRET), "{what} leaks the secret: {text}");
    }
    // The scan can see a leak: the sentinel is present where it belongs.
    assert!(
        all.iter()
            .any(|(w, t)| w == "audit record" && t.contains("[redacted]")),
        "payloads audited redacted"
    );
}

#[tokio::test]
async fn no_secret_in_results_errors_audit_records_traces_or_approval_views() {
    let emitted = scenarios().await;
    assert_clean(&emitted);
    // Each scenario reached the outcome it stages, so the scan covered it.
    let codes: Vec<String> = emitted
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(w, _)| w == "code")
        .map(|(_, c)| c.clone())
        .collect();
    assert_eq!(
        codes,
        [
            "ok",
            "EXECUTION_FAILED",
            "OUTPUT_INVALID",
            "EXECUTION_FAILED",
            "NOT_FOUND",
            "LIMIT_EXCEEDED",
            "LIMIT_EXCEEDED",
            "POLICY_DENIED",
            "POLICY_DENIED",
            "NOT_FOUND",
            "approval_required",
            "ok",
            "APPROVAL_CONSUMED",
            "approval_required",
            "APPROVAL_REJECTED",
            "APPROVAL_REJECTED",
        ]
    );
}

/// Proves the scan can fail: without the redactor, the same output leaks
/// into the result and the audit payload, and the scan says so.
#[tokio::test]
async fn the_scan_sees_a_leak_when_there_is_one() {
    let emitted = Arc::new(Emitted::default());
    let reg = registry(
        json!([{"id": "cards.raw", "meta": base(json!({"redact": {"output": false}}))}]),
        Value::Null,
    );
    let d = builder(&reg)
        .audit(Arc::new(Audit(Arc::clone(&emitted))), true)
        .handler("cards.raw", Arc::new(Leaky { throw: false }))
        .build()
        .unwrap();
    let o = d.invoke("cards.raw", json!({}), Call::new(frame())).await;
    emitted.outcome("raw", &o);
    let leaked = emitted
        .0
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, t)| t.contains(SECRET))
        .count();
    assert!(leaked >= 2, "result and audit payload carry it: {leaked}");
}

/// The child half of the log scan: runs the scenarios when asked to.
#[tokio::test]
async fn child_scenarios_for_the_log_scan() {
    if std::env::var_os(CHILD_ENV).is_some() {
        assert_clean(&*scenarios().await);
        println!("leak-scan child done");
    }
}

/// Log lines: the scenarios re-run in a child process (this test binary),
/// and nothing it writes to stdout or stderr holds the secret.
#[test]
fn no_secret_in_any_line_the_process_writes() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            // The test binary is tests/main.rs: names carry the module.
            "leak_scan::child_scenarios_for_the_log_scan",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("leak-scan child done"),
        "the child ran the scenarios:\n{stdout}"
    );
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        if let Some(line) = text.lines().find(|l| l.contains(SECRET)) {
            panic!("{name} leaks the secret: {line}");
        }
    }
}
