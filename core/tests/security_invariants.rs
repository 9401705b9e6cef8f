#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! One test per security invariant of DESIGN §9, each through the public API
//! (the tokio driver or the state machine), each written so that it fails
//! when its invariant is broken.

use crate::pipeline_support;

use std::sync::{Arc, Mutex};

use orpc_agent_core::approval::{
    ApprovalRequest, ApprovalStore, BoxFuture, ConsumeRefusal, Decision as ApprovalDecision,
    ListFilter, MemoryApprovalStore, StoreError,
};
use orpc_agent_core::pipeline::driver::{Call, Driver};
use orpc_agent_core::pipeline::{
    Answer, Decision, Invocation, InvokeOptions, Outcome, Payload, Step, StepKind,
};
use orpc_agent_core::{
    Actor, CapabilityDecl, CapabilityRegistry, ErrorCode, Frame, RegistryOptions, Surface,
};
use pipeline_support::*;
use serde_json::{Value, json};

fn actor(id: &str) -> Actor {
    Actor {
        id: Some(id.into()),
        roles: vec![],
        attributes: Default::default(),
    }
}

fn call(surface: Surface) -> Call {
    Call::new(Frame::new(surface))
}

fn call_as(surface: Surface, who: &str) -> Call {
    Call::new(Frame::new(surface).with_actor(actor(who)))
}

#[tokio::test(start_paused = true)]
async fn si_01_exposure_is_deny_by_default_per_surface() {
    let m = json!({"description": "d", "sideEffect": "read", "risk": "low",
                   "expose": {"mcp": true, "aiSdk": false}});
    let reg = registry(json!([{"id": "orders.search", "meta": m}]), Value::Null);
    let h = Fixture::new(Behaviour::Echo);
    let d = builder(&reg)
        .handler("orders.search", h.clone())
        .build()
        .unwrap();

    let ok = d
        .invoke("orders.search", json!({"q": 1}), call(Surface::Mcp))
        .await;
    assert_eq!(ok_json(&ok), &json!({"q": 1}));
    // `false` and absent surfaces are both unexposed: only literal `true` exposes.
    for s in [
        Surface::AiSdk,
        Surface::Direct,
        Surface::Workflow,
        Surface::Test,
    ] {
        let o = d.invoke("orders.search", json!({"q": 1}), call(s)).await;
        assert_eq!(error_of(&o).code, ErrorCode::NotFound, "{s:?}");
    }
    assert_eq!(h.calls(), 1, "the handler ran only for the exposed surface");
}

#[tokio::test(start_paused = true)]
async fn si_02_surface_comes_from_the_frame_never_from_input() {
    // A policy denying every call on mcp; the input claims to come from mcp.
    let m = with(
        meta(&["aiSdk", "mcp"]),
        json!({"policies": [{"name": "no-mcp", "when": {"surface": ["mcp"]},
                             "decision": "deny", "reason": "not on mcp"}],
               "redact": {"output": true}}),
    );
    let reg = registry(json!([{"id": "a.b", "meta": m}]), Value::Null);
    let red = MaskFields::new(&[]);
    let d = builder(&reg)
        .handler("a.b", Fixture::new(Behaviour::Echo))
        .redact_output("a.b", red.clone())
        .build()
        .unwrap();
    let sneaky = json!({"surface": "mcp", "frame": {"surface": "mcp"}});
    let o = d.invoke("a.b", sneaky.clone(), call(Surface::AiSdk)).await;
    assert_eq!(ok_json(&o), &sneaky);
    assert_eq!(
        red.seen.lock().unwrap()[0].0,
        Surface::AiSdk,
        "redactor told the frame's surface"
    );
    let o = d
        .invoke("a.b", json!({"surface": "aiSdk"}), call(Surface::Mcp))
        .await;
    assert_eq!(error_of(&o).code, ErrorCode::PolicyDenied);
}

type EditFn = Box<dyn Fn(&mut ApprovalRequest) + Send>;

/// A store wrapper that lets a test see or alter what `consume` returns.
struct Tamper {
    inner: MemoryApprovalStore,
    edit: Mutex<Option<EditFn>>,
}

impl ApprovalStore for Tamper {
    fn create<'a>(&'a self, r: &'a ApprovalRequest) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.create(r)
    }
    fn get<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<ApprovalRequest>, StoreError>> {
        self.inner.get(id)
    }
    fn list<'a>(
        &'a self,
        f: &'a ListFilter,
    ) -> BoxFuture<'a, Result<Vec<ApprovalRequest>, StoreError>> {
        self.inner.list(f)
    }
    fn decide<'a>(
        &'a self,
        id: &'a str,
        decision: ApprovalDecision,
        approver: Option<&'a str>,
        reason: Option<&'a str>,
        now_ms: u64,
        must_differ: bool,
    ) -> BoxFuture<'a, Result<ApprovalRequest, StoreError>> {
        self.inner
            .decide(id, decision, approver, reason, now_ms, must_differ)
    }
    fn consume<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Result<ApprovalRequest, ConsumeRefusal>, StoreError>> {
        Box::pin(async move {
            let mut r = self.inner.consume(id, now_ms).await;
            if let (Ok(Ok(req)), Some(edit)) = (&mut r, self.edit.lock().unwrap().as_ref()) {
                edit(req);
            }
            r
        })
    }
}

fn tamper_store() -> Arc<Tamper> {
    Arc::new(Tamper {
        inner: MemoryApprovalStore::new(),
        edit: Mutex::new(None),
    })
}

fn approval_id(o: &Outcome) -> String {
    match o {
        Outcome::ApprovalRequired(r) => r.id.clone(),
        other => panic!("expected approval_required, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn si_03_resume_uses_the_recorded_surface_and_actor() {
    let m = with(
        meta(&["mcp", "direct"]),
        json!({"approval": {"required": true}, "redact": {"output": true}}),
    );
    let reg = registry(json!([{"id": "pay.send", "meta": m}]), Value::Null);
    let h = Fixture::new(Behaviour::Echo);
    let red = MaskFields::new(&[]);
    let d = builder(&reg)
        .handler("pay.send", h.clone())
        .redact_output("pay.send", red.clone())
        .build()
        .unwrap();
    let o = d
        .invoke(
            "pay.send",
            json!({"amount": 5}),
            call_as(Surface::Mcp, "alice"),
        )
        .await;
    let id = approval_id(&o);
    d.decide(&id, ApprovalDecision::Approve, Some("manager"), None)
        .await
        .unwrap();
    // Someone else resumes from another surface: the recorded ones win.
    let o = d.resume(&id, call_as(Surface::Direct, "mallory")).await;
    assert_eq!(ok_json(&o), &json!({"amount": 5}));
    let log = h.log.lock().unwrap();
    assert_eq!(log[0].surface, Surface::Mcp);
    assert_eq!(log[0].actor_id.as_deref(), Some("alice"));
    let seen = red.seen.lock().unwrap();
    assert_eq!(
        seen[0],
        (
            Surface::Mcp,
            "pay.send".to_owned(),
            Some("alice".to_owned())
        )
    );
}

#[test]
fn si_04_invalid_metadata_never_serves() {
    let decls = vec![
        CapabilityDecl::new("ok.one", meta(&["mcp"])),
        // Missing risk, and retry on a write without idempotent: two problems.
        CapabilityDecl::new(
            "bad.one",
            json!({"description": "d", "expose": {"mcp": true}, "sideEffect": "write",
                   "retry": {"maxAttempts": 2}}),
        ),
    ];
    let err = CapabilityRegistry::build(decls, RegistryOptions::default()).unwrap_err();
    assert!(err.problems.len() >= 2, "one aggregate error: {err:?}");
    assert!(
        err.problems
            .iter()
            .all(|p| p.capability.as_deref() == Some("bad.one"))
    );
    // No registry means no Invocation can even be started: the type system
    // makes "serve with invalid metadata" unrepresentable.
}

#[tokio::test(start_paused = true)]
async fn si_05_policies_hashes_and_handlers_see_only_validated_input() {
    // The validator turns a string amount into a number; the predicate
    // `/amount > 1000` only matches the validated value.
    let m = with(
        meta(&["mcp"]),
        json!({"policies": [{"name": "big", "when": {"input": ["/amount > 1000"]},
                             "decision": "requireApproval"}]}),
    );
    let reg = registry(
        json!([{"id": "pay.send", "meta": m, "validateInput": true}]),
        Value::Null,
    );
    let h = Fixture::new(Behaviour::Echo);
    let validator = FnValidator(Box::new(|v: &Value| {
        let s = v["amount"].as_str().ok_or("amount must be a string")?;
        Ok(json!({"amount": s.parse::<u64>().map_err(|e| e.to_string())?, "note": "validated"}))
    }));
    let d = builder(&reg)
        .handler("pay.send", h.clone())
        .input_validator("pay.send", Arc::new(validator))
        .build()
        .unwrap();
    let o = d
        .invoke(
            "pay.send",
            json!({"amount": "5000"}),
            call_as(Surface::Mcp, "a"),
        )
        .await;
    let Outcome::ApprovalRequired(req) = &o else {
        panic!("{o:?}")
    };
    let validated = json!({"amount": 5000, "note": "validated"});
    assert_eq!(req.input, validated);
    assert_eq!(
        req.input_hash,
        orpc_agent_core::act::input_hash("pay.send", &validated).unwrap()
    );
    let o = d
        .invoke("pay.send", json!({"amount": "5"}), call(Surface::Mcp))
        .await;
    assert_eq!(ok_json(&o), &json!({"amount": 5, "note": "validated"}));
    assert_eq!(
        h.log.lock().unwrap()[0].input,
        json!({"amount": 5, "note": "validated"})
    );

    // In the machine: a raw JSON input replaced by a host-held validated one
    // is never read again; the predicate asks for the validated input.
    let mut inv = Invocation::start(
        Arc::clone(&reg),
        "pay.send",
        Payload::Json(json!({"amount": 99999})),
        Frame::new(Surface::Mcp),
        InvokeOptions::at(0),
    );
    inv.answer(Answer::InputValid(Payload::Host)).unwrap();
    assert_eq!(inv.step_kind(), StepKind::ExportInput);
    inv.answer(Answer::InputExported(json!({"amount": 1})))
        .unwrap();
    assert_eq!(
        inv.step_kind(),
        StepKind::RunHandler,
        "validated amount 1 needs no approval"
    );
}

#[tokio::test(start_paused = true)]
async fn si_06_runtime_policies_first_first_deny_wins_failing_denies() {
    let opts = json!({"policies": [{"name": "rt-allow", "host": true}, {"name": "rt-gate", "host": true}]});
    let m = with(
        meta(&["mcp"]),
        json!({"policies": [{"name": "cap", "host": true}]}),
    );
    let reg = registry(json!([{"id": "x.y", "meta": m}]), opts);
    let run = |rt_gate: Result<Decision, String>, delay: u64, cap: Decision| {
        let order = Arc::new(Mutex::new(Vec::new()));
        let p = |name: &str, answer: Result<Decision, String>, delay_ms: u64| {
            Arc::new(orpc_agent_core_fixed(name, answer, delay_ms, &order))
        };
        let d = builder(&reg)
            .handler("x.y", Fixture::new(Behaviour::Echo))
            .runtime_policy(0, p("rt-allow", Ok(Decision::Allow), 0))
            .runtime_policy(1, p("rt-gate", rt_gate, delay))
            .policy("x.y", 0, p("cap", Ok(cap), 0))
            .build()
            .unwrap();
        (d, order)
    };
    // Runtime allow then capability deny: deny wins, runtime ran first.
    let cap_deny = Decision::Deny {
        reason: Some("cap says no".into()),
    };
    let (d, order) = run(Ok(Decision::Abstain), 0, cap_deny.clone());
    let o = d.invoke("x.y", json!({}), call(Surface::Mcp)).await;
    let e = error_of(&o);
    assert_eq!(e.code, ErrorCode::PolicyDenied);
    assert!(e.message.contains("cap says no"), "{}", e.message);
    let names: Vec<String> = order
        .lock()
        .unwrap()
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    assert_eq!(names, ["rt-allow", "rt-gate", "cap"]);
    // A runtime deny stops evaluation: the capability policy never runs.
    let runtime_no = Decision::Deny {
        reason: Some("runtime no".into()),
    };
    let (d, order) = run(Ok(runtime_no), 0, cap_deny);
    let o = d.invoke("x.y", json!({}), call(Surface::Mcp)).await;
    assert!(error_of(&o).message.contains("runtime no"));
    assert_eq!(order.lock().unwrap().len(), 2);
    // A throwing policy denies, and so does one past its timeout (30 s),
    // even when every other policy allows.
    let (d, _) = run(Err("boom".into()), 0, Decision::Allow);
    let o = d.invoke("x.y", json!({}), call(Surface::Mcp)).await;
    assert_eq!(error_of(&o).code, ErrorCode::PolicyDenied);
    assert!(!error_of(&o).message.contains("boom"));
    let (d, _) = run(Ok(Decision::Allow), 60_000, Decision::Allow);
    let o = d.invoke("x.y", json!({}), call(Surface::Mcp)).await;
    assert_eq!(error_of(&o).code, ErrorCode::PolicyDenied);
    // ...while the same policies answering in time let the call through.
    let (d, _) = run(Ok(Decision::Allow), 10, Decision::Allow);
    assert!(matches!(
        d.invoke("x.y", json!({}), call(Surface::Mcp)).await,
        Outcome::Ok(_)
    ));
}

fn orpc_agent_core_fixed(
    name: &str,
    answer: Result<Decision, String>,
    delay_ms: u64,
    order: &Arc<Mutex<Vec<(String, Value)>>>,
) -> FixedPolicy {
    FixedPolicy {
        name: name.into(),
        answer,
        delay_ms,
        order: Arc::clone(order),
    }
}

#[tokio::test(start_paused = true)]
async fn si_07_an_approval_binds_the_input_is_single_use_and_expires() {
    let m = with(
        meta(&["mcp"]),
        json!({"approval": {"required": true, "expiresInMs": 60000}}),
    );
    let reg = registry(json!([{"id": "pay.send", "meta": m}]), Value::Null);
    let store = tamper_store();
    let h = Fixture::new(Behaviour::Echo);
    let d = Driver::builder(Arc::clone(&reg), store.clone())
        .handler("pay.send", h.clone())
        .build()
        .unwrap();
    let ask = || {
        d.invoke(
            "pay.send",
            json!({"amount": 5}),
            call_as(Surface::Mcp, "alice"),
        )
    };

    // Single use.
    let id = approval_id(&ask().await);
    d.decide(&id, ApprovalDecision::Approve, Some("bob"), None)
        .await
        .unwrap();
    assert_eq!(
        ok_json(&d.resume(&id, call(Surface::Mcp)).await),
        &json!({"amount": 5})
    );
    let again = d.resume(&id, call(Surface::Mcp)).await;
    assert_eq!(error_of(&again).code, ErrorCode::ApprovalConsumed);

    // Bound to the input: a stored input changed after approval fails.
    let id = approval_id(&ask().await);
    d.decide(&id, ApprovalDecision::Approve, Some("bob"), None)
        .await
        .unwrap();
    *store.edit.lock().unwrap() = Some(Box::new(|r| r.input = json!({"amount": 5_000_000})));
    let o = d.resume(&id, call(Surface::Mcp)).await;
    assert_eq!(error_of(&o).code, ErrorCode::ApprovalInvalid);
    // ...and to the capability.
    let id = approval_id(&ask().await);
    d.decide(&id, ApprovalDecision::Approve, Some("bob"), None)
        .await
        .unwrap();
    *store.edit.lock().unwrap() = Some(Box::new(|r| r.capability_id = "pay.other".into()));
    let o = d.resume(&id, call(Surface::Mcp)).await;
    assert_ne!(&o, &Outcome::Ok(Payload::Json(json!({"amount": 5}))));
    *store.edit.lock().unwrap() = None;

    // Expires.
    let id = approval_id(&ask().await);
    d.decide(&id, ApprovalDecision::Approve, Some("bob"), None)
        .await
        .unwrap();
    tokio::time::advance(std::time::Duration::from_millis(60_001)).await;
    let o = d.resume(&id, call(Surface::Mcp)).await;
    assert_eq!(error_of(&o).code, ErrorCode::ApprovalExpired);
    assert_eq!(h.calls(), 1, "only the one valid resume ran the handler");
}

#[tokio::test(start_paused = true)]
async fn si_08_unexposed_is_indistinguishable_from_missing() {
    let hidden = json!([{"id": "admin.drop", "meta": meta(&["direct"])}]);
    let with_hidden = registry(hidden, Value::Null);
    let without = registry(
        json!([{"id": "other.thing", "meta": meta(&["mcp"])}]),
        Value::Null,
    );
    // Same name (id, and the derived tool name) on both registries: the
    // caller sees the same steps and the same error, field for field.
    for name in ["admin.drop", "admin_drop"] {
        let run = |reg: &Arc<CapabilityRegistry>| {
            let mut inv = Invocation::start(
                Arc::clone(reg),
                name,
                Payload::Json(json!({})),
                Frame::new(Surface::Mcp),
                InvokeOptions {
                    now_ms: 0,
                    audit: true,
                    audit_payloads: false,
                    span_payloads: false,
                },
            );
            drive_sync(&mut inv, permissive)
        };
        let (a, steps_a) = run(&with_hidden);
        let (b, steps_b) = run(&without);
        assert_eq!(error_of(&a).code, ErrorCode::NotFound);
        assert_eq!(a, b, "{name}");
        assert_eq!(steps_a, steps_b);
    }
}

#[tokio::test(start_paused = true)]
async fn si_09_deadline_aborts_the_handler_and_discards_a_late_result() {
    let m = with(meta(&["mcp"]), json!({"timeoutMs": 100}));
    let reg = registry(json!([{"id": "slow.op", "meta": m}]), Value::Null);
    let h = Fixture::new(Behaviour::Delay(5_000));
    let d = builder(&reg).handler("slow.op", h.clone()).build().unwrap();
    let t0 = tokio::time::Instant::now();
    let o = d
        .invoke("slow.op", json!({"x": 1}), call(Surface::Mcp))
        .await;
    assert_eq!(error_of(&o).code, ErrorCode::Timeout);
    assert_eq!(
        tokio_ms(t0),
        100,
        "the caller got the answer at the deadline"
    );
    tokio::task::yield_now().await;
    assert_eq!(
        *h.saw_cancel_at_ms.lock().unwrap(),
        Some(100),
        "the signal fired at the deadline"
    );
    // Long after the handler would have returned, nothing else arrives.
    tokio::time::advance(std::time::Duration::from_millis(10_000)).await;
    assert_eq!(h.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn si_10_nothing_unredacted_leaves_the_runtime() {
    const SECRET: &str = "123-45-6789";
    let caps = json!([
        {"id": "hr.masked", "meta": with(meta(&["mcp"]), json!({"redact": {"output": true}}))},
        {"id": "hr.broken", "meta": with(meta(&["mcp"]), json!({"redact": {"output": true}}))},
        {"id": "hr.badout", "meta": meta(&["mcp"]), "validateOutput": true},
        {"id": "hr.throws", "meta": meta(&["mcp"])},
    ]);
    let reg = registry(caps, Value::Null);
    let audit = Arc::new(Collector::default());
    let person = json!({"name": "Ann", "ssn": SECRET});
    let d = builder(&reg)
        .handler("hr.masked", Fixture::new(Behaviour::Return(person.clone())))
        .handler("hr.broken", Fixture::new(Behaviour::Return(person.clone())))
        .handler("hr.badout", Fixture::new(Behaviour::Return(person.clone())))
        .handler(
            "hr.throws",
            Fixture::new(Behaviour::Throw(format!("db row {SECRET}"))),
        )
        .redact_output("hr.masked", MaskFields::new(&["ssn"]))
        .redact_output("hr.broken", Arc::new(ThrowRedactor))
        .output_validator(
            "hr.badout",
            Arc::new(FnValidator(Box::new(|v: &Value| {
                Err(format!("bad ssn {}", v["ssn"]))
            }))),
        )
        .audit(audit.clone(), true)
        .build()
        .unwrap();
    let o = d.invoke("hr.masked", json!({}), call(Surface::Mcp)).await;
    assert_eq!(ok_json(&o), &json!({"name": "Ann", "ssn": "***"}));
    let records = audit.take();
    assert_eq!(
        records.last().unwrap().output,
        Some(json!({"name": "Ann", "ssn": "***"}))
    );
    for id in ["hr.broken", "hr.badout", "hr.throws"] {
        let o = d.invoke(id, json!({}), call(Surface::Mcp)).await;
        let e = error_of(&o);
        assert!(!e.to_json().to_string().contains(SECRET), "{id}: {e:?}");
    }
    let dump = serde_json::to_string(&audit.take().iter().map(|r| r.to_json()).collect::<Vec<_>>())
        .unwrap();
    assert!(!dump.contains(SECRET), "audit leaked: {dump}");
    assert!(
        !dump.contains("Ann"),
        "no output payload on failures: {dump}"
    );
}

#[tokio::test(start_paused = true)]
async fn si_11_retries_wrap_stage_11_only_for_retryable_errors_of_eligible_capabilities() {
    let retry = json!({"retry": {"maxAttempts": 3, "backoffMs": 10}});
    let caps = json!([
        {"id": "r.read", "meta": with(meta(&["mcp"]), retry.clone()), "validateInput": true},
        {"id": "r.fatal", "meta": with(meta(&["mcp"]), retry.clone())},
        {"id": "w.idem", "meta": with(with(meta(&["mcp"]), retry.clone()),
                                     json!({"sideEffect": "write", "idempotent": true}))},
        {"id": "w.plain", "meta": with(meta(&["mcp"]), json!({"sideEffect": "write", "idempotent": true}))},
        {"id": "r.noconf", "meta": meta(&["mcp"])},
    ]);
    let reg = registry(caps, Value::Null);
    let read = Fixture::new(Behaviour::FailRetryableNTimes(2));
    let fatal = Fixture::new(Behaviour::FailWithCode {
        code: ErrorCode::ExecutionFailed,
        retryable: false,
        details: None,
    });
    let idem = Fixture::new(Behaviour::FailRetryableNTimes(1));
    let plain = Fixture::new(Behaviour::FailRetryableNTimes(1));
    let noconf = Fixture::new(Behaviour::FailRetryableNTimes(1));
    let validations = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let v2 = validations.clone();
    let d = builder(&reg)
        .handler("r.read", read.clone())
        .handler("r.fatal", fatal.clone())
        .handler("w.idem", idem.clone())
        .handler("w.plain", plain.clone())
        .handler("r.noconf", noconf.clone())
        .input_validator(
            "r.read",
            Arc::new(FnValidator(Box::new(move |v: &Value| {
                v2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Ok(v.clone())
            }))),
        )
        .build()
        .unwrap();
    let o = d.invoke("r.read", json!({}), call(Surface::Mcp)).await;
    assert!(matches!(o, Outcome::Ok(_)), "{o:?}");
    assert_eq!(read.calls(), 3);
    assert_eq!(
        validations.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "only stage 11 repeats"
    );
    d.invoke("r.fatal", json!({}), call(Surface::Mcp)).await;
    assert_eq!(fatal.calls(), 1, "non-retryable errors are not retried");
    assert!(matches!(
        d.invoke("w.idem", json!({}), call(Surface::Mcp)).await,
        Outcome::Ok(_)
    ));
    assert_eq!(
        idem.calls(),
        2,
        "idempotent write with retry config retries"
    );
    let o = d.invoke("w.plain", json!({}), call(Surface::Mcp)).await;
    assert_eq!(error_of(&o).code, ErrorCode::ExecutionFailed);
    assert_eq!(
        plain.calls(),
        1,
        "idempotent without a retry config: no retry"
    );
    d.invoke("r.noconf", json!({}), call(Surface::Mcp)).await;
    assert_eq!(noconf.calls(), 1, "read without a retry config: no retry");
}

#[tokio::test(start_paused = true)]
async fn si_12_contextual_discovery_grants_no_authority() {
    let ctx = |extra: Value| {
        with(
            with(meta(&["aiSdk"]), json!({"discovery": "contextual"})),
            extra,
        )
    };
    let caps = json!([
        {"id": "c.hidden", "meta": with(ctx(json!({})), json!({"expose": {"direct": true}}))},
        {"id": "c.denied", "meta": ctx(json!({"policies": [{"decision": "deny", "reason": "no"}]}))},
        {"id": "c.gated", "meta": ctx(json!({"approval": {"required": true}}))},
    ]);
    let reg = registry(caps, Value::Null);
    let h = Fixture::new(Behaviour::Echo);
    let d = builder(&reg)
        .handler("c.hidden", h.clone())
        .handler("c.denied", h.clone())
        .handler("c.gated", h.clone())
        .build()
        .unwrap();
    let o = d.invoke("c.hidden", json!({}), call(Surface::AiSdk)).await;
    assert_eq!(error_of(&o).code, ErrorCode::NotFound);
    let o = d.invoke("c.denied", json!({}), call(Surface::AiSdk)).await;
    assert_eq!(error_of(&o).code, ErrorCode::PolicyDenied);
    let o = d
        .invoke("c.gated", json!({}), call_as(Surface::AiSdk, "u1"))
        .await;
    assert!(matches!(o, Outcome::ApprovalRequired(_)), "{o:?}");
    assert_eq!(h.calls(), 0);
}

#[test]
fn step_reading_is_total() {
    // Reading a step on a finished invocation is fine, any number of times.
    let reg = registry(json!([{"id": "a.b", "meta": meta(&["mcp"])}]), Value::Null);
    let mut inv = Invocation::start(
        reg,
        "zzz",
        Payload::Host,
        Frame::new(Surface::Mcp),
        InvokeOptions::at(0),
    );
    assert!(matches!(inv.step(), Step::Done(_)));
    assert!(inv.take_outcome().is_some());
    assert!(inv.take_outcome().is_none());
    assert!(matches!(inv.step(), Step::Done(_)));
}
