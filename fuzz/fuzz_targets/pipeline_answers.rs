//! The pipeline state machine fed arbitrary host answers in arbitrary
//! order. Whatever the host does, the machine never panics and:
//! * an answer that does not fit the step ends it in `INTERNAL`, once;
//! * once done, it stays done with the same outcome;
//! * the handler runs at most once for a capability without retries, at
//!   most `maxAttempts` times otherwise, and never for a call the approval
//!   gate stopped (no approved write runs twice, none runs unapproved);
//! * a capability with an output redactor never returns, audits or
//!   reports the unredacted output (SI-10): the handler's output carries a
//!   sentinel no redactor answer does;
//! * a call started with an over-limit verdict (`start_measured`, what the
//!   bindings do) never reaches the handler.
#![no_main]

use std::sync::{Arc, OnceLock};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use orpc_agent_core::approval::ApprovalRequest;
use orpc_agent_core::pipeline::{
    Answer, AuditEvent, Decision, InvokeOptions, Outcome, Payload, Step, StepKind,
};
use orpc_agent_core::{
    Actor, CapabilityDecl, CapabilityRegistry, ErrorCode, Frame, Invocation, Surface,
};
use serde_json::{Value, json};

const SENTINEL: &str = "SENTINEL-8c1f-unredacted";

fn registry() -> &'static Arc<CapabilityRegistry> {
    static REGISTRY: OnceLock<Arc<CapabilityRegistry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let cap = |id: &str, meta: Value| CapabilityDecl::new(id, meta);
        let decls = vec![
            cap("notes.read", json!({"description": "Read.", "expose": {"mcp": true, "direct": true},
                "sideEffect": "read", "risk": "low",
                "retry": {"maxAttempts": 3, "backoffMs": 10}})),
            cap("orders.refund", json!({"description": "Refund.", "expose": {"mcp": true},
                "sideEffect": "write", "risk": "high", "approval": {"required": true},
                "redact": {"output": true, "approvalInput": true},
                "policies": [{"name": "h", "host": true},
                    {"name": "big", "when": {"input": ["/amount > 1000"]}, "decision": "requireApproval"}]})),
            cap("orders.cancel", json!({"description": "Cancel.", "expose": {"mcp": true},
                "sideEffect": "write", "risk": "medium", "idempotent": true,
                "retry": {"maxAttempts": 2, "backoffMs": 5, "retryOn": true},
                "redact": {"output": true},
                "policies": [{"name": "gate", "when": {"input": ["/amount > 10"]},
                    "decision": "requireApproval", "mode": "shadow"}]})),
            cap("files.delete", json!({"description": "Delete.", "expose": {"mcp": true},
                "sideEffect": "destructive", "risk": "high", "timeoutMs": 50})),
        ];
        let options = json!({"policies": [{"name": "rt", "host": true},
            {"name": "ro", "when": {"risk": ["critical"]}, "decision": "deny"}]});
        Arc::new(CapabilityRegistry::build_with_json_options(decls, &options).expect("fuzz registry"))
    })
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Val {
    Small,
    Big,
    Secret,
    Host,
}

impl Val {
    fn json(self) -> Value {
        match self {
            Val::Small => json!({"amount": 5}),
            Val::Big => json!({"amount": 5000}),
            Val::Secret => json!({"token": SENTINEL}),
            Val::Host => Value::Null,
        }
    }
    fn payload(self) -> Payload {
        match self {
            Val::Host => Payload::Host,
            v => Payload::Json(v.json()),
        }
    }
    /// What a redactor answers: never the sentinel.
    fn redacted(self) -> Payload {
        match self {
            Val::Host => Payload::Host,
            Val::Secret => Payload::Json(json!({"token": "[redacted]"})),
            v => Payload::Json(v.json()),
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Ans {
    InputValid(Val),
    InputInvalid,
    InputIssues(u8),
    InputValidatorFailed,
    DeadlinePassed(u16),
    Policy(u8),
    PolicyFailed,
    InputExported(Val),
    InputNotExportable,
    Persisted,
    StoreFailed,
    Consumed(bool, Val),
    ConsumeRefused(Val),
    HandlerOk(Val, u16),
    HandlerError(bool, bool, u16),
    HandlerTimedOut(u16),
    Cancelled(u16),
    RetryOn(bool),
    Slept(u16),
    OutputValid(Val),
    OutputInvalid,
    Redacted(Val),
    RedactorFailed,
    OutputExported(Val),
    Audited,
    /// The answer the current step expects, built to fit.
    Fitting(Val, u8),
}

#[derive(Arbitrary, Debug)]
struct Case {
    capability: u8,
    by_index: bool,
    surface: u8,
    input: Val,
    audit: bool,
    audit_payloads: bool,
    resume: bool,
    /// Started as the bindings start a host-held input: with the host's
    /// input-limits verdict (over a limit or not).
    measured: Option<bool>,
    answers: Vec<Ans>,
}

const NOW: u64 = 1_700_000_000_000;

fn request_for(cap: &str, input: Val) -> ApprovalRequest {
    let input = input.json();
    let hash = orpc_agent_core::act::input_hash(cap, &input).unwrap_or_default();
    serde_json::from_value(json!({
        "id": "apr_fuzz", "capabilityId": cap, "input": input, "inputHash": hash,
        "surface": "mcp", "actor": {"id": "u1"}, "type": "default", "createdAt": NOW,
        "expiresAt": NOW + 60_000, "status": "consumed"
    }))
    .unwrap_or_else(|_| panic!("approval request JSON"))
}

fn decision(d: u8) -> Decision {
    match d % 4 {
        0 => Decision::Allow,
        1 => Decision::Deny {
            reason: Some("no".into()),
        },
        2 => Decision::RequireApproval {
            approval_type: None,
            reason: None,
            expires_in_ms: Some(1000),
        },
        _ => Decision::Abstain,
    }
}

fn now(d: u16) -> u64 {
    NOW + u64::from(d)
}

fn build(a: &Ans, inv: &Invocation) -> Answer {
    let cap = inv
        .capability()
        .map_or("notes.read", |c| c.id.as_str())
        .to_owned();
    match *a {
        Ans::InputValid(v) => Answer::InputValid(v.payload()),
        Ans::InputInvalid => Answer::InputInvalid("bad".into()),
        Ans::InputIssues(n) => Answer::InputIssues(
            (0..n)
                .map(|i| orpc_agent_core::pipeline::InputIssue {
                    path: vec![i.to_string(), "~/".into()],
                    message: "x\n".repeat(usize::from(i)),
                })
                .collect(),
        ),
        Ans::InputValidatorFailed => Answer::InputValidatorFailed,
        Ans::DeadlinePassed(t) => Answer::DeadlinePassed {
            now_ms: u64::from(t),
        },
        Ans::Policy(d) => Answer::PolicyDecision(decision(d)),
        Ans::PolicyFailed => Answer::PolicyFailed("threw".into()),
        Ans::InputExported(v) => Answer::InputExported(v.json()),
        Ans::InputNotExportable => Answer::InputNotExportable("NaN".into()),
        Ans::Persisted => Answer::Persisted,
        Ans::StoreFailed => Answer::StoreFailed(orpc_agent_core::CapabilityError::new(
            ErrorCode::Internal,
            "down",
        )),
        Ans::Consumed(ok, v) => Answer::Consumed(if ok {
            Ok(Box::new(request_for(&cap, v)))
        } else {
            Err(orpc_agent_core::CapabilityError::new(
                ErrorCode::ApprovalPending,
                "pending",
            ))
        }),
        Ans::ConsumeRefused(v) => Answer::ConsumeRefused {
            error: orpc_agent_core::CapabilityError::new(ErrorCode::ApprovalRejected, "rejected"),
            request: Box::new(request_for(&cap, v)),
        },
        Ans::HandlerOk(v, d) => Answer::HandlerOk {
            output: v.payload(),
            now_ms: now(d),
        },
        Ans::HandlerError(coded, retryable, d) => Answer::HandlerError {
            code: coded.then_some(ErrorCode::ExecutionFailed),
            // A handler's own CapabilityError keeps its message by design;
            // a plain throw's answer carries the error's class, but a host
            // that passes its message there must not leak it: the audit
            // record keeps only a class-shaped text (`failure_text`).
            message: if coded {
                "coded failure".into()
            } else {
                SENTINEL.into()
            },
            retryable,
            // A coded error's details reach the caller; a plain throw's
            // never (the sentinel must not appear anywhere).
            details: Some(Box::new(if coded {
                json!({"retryAfterMs": d})
            } else {
                json!({"token": SENTINEL})
            })),
            now_ms: now(d),
        },
        Ans::HandlerTimedOut(d) => Answer::HandlerTimedOut { now_ms: now(d) },
        Ans::Cancelled(d) => Answer::Cancelled { now_ms: now(d) },
        Ans::RetryOn(b) => Answer::RetryOn(b),
        Ans::Slept(d) => Answer::Slept { now_ms: now(d) },
        Ans::OutputValid(v) => Answer::OutputValid(v.payload()),
        Ans::OutputInvalid => Answer::OutputInvalid(SENTINEL.into()),
        Ans::Redacted(v) => Answer::Redacted(v.redacted()),
        Ans::RedactorFailed => Answer::RedactorFailed,
        Ans::OutputExported(v) => {
            Answer::OutputExported(v.redacted().as_json().cloned().unwrap_or(Value::Null))
        }
        Ans::Audited => Answer::Audited,
        Ans::Fitting(v, d) => fitting(inv, &cap, v, d),
    }
}

/// An answer that fits the current step, so long runs go deep.
fn fitting(inv: &Invocation, cap: &str, v: Val, d: u8) -> Answer {
    let t = now(u16::from(d));
    match inv.step_kind() {
        StepKind::ValidateInput => Answer::InputValid(v.payload()),
        StepKind::EvaluatePolicy => Answer::PolicyDecision(decision(d)),
        StepKind::ExportInput => Answer::InputExported(v.json()),
        StepKind::PersistApproval => Answer::Persisted,
        StepKind::ConsumeApproval => Answer::Consumed(Ok(Box::new(request_for(cap, v)))),
        StepKind::RunHandler => match d % 4 {
            0 | 1 => Answer::HandlerOk {
                output: v.payload(),
                now_ms: t,
            },
            2 => Answer::HandlerError {
                code: None,
                message: SENTINEL.into(),
                retryable: true,
                details: Some(Box::new(json!({"token": SENTINEL}))),
                now_ms: t,
            },
            _ => Answer::HandlerTimedOut { now_ms: t },
        },
        StepKind::AskRetryOn => Answer::RetryOn(d.is_multiple_of(2)),
        StepKind::Sleep => Answer::Slept { now_ms: t },
        StepKind::ValidateOutput => Answer::OutputValid(v.payload()),
        StepKind::RedactOutput => Answer::Redacted(v.redacted()),
        StepKind::ExportOutput => {
            Answer::OutputExported(v.redacted().as_json().cloned().unwrap_or(Value::Null))
        }
        StepKind::Audit | StepKind::Done => Answer::Audited,
    }
}

/// An input nested one level past the depth limit.
fn too_deep() -> Value {
    (0..=orpc_agent_core::limits::MAX_INPUT_DEPTH).fold(Value::Null, |v, _| json!([v]))
}

fn contains_sentinel(v: &Value) -> bool {
    serde_json::to_string(v).is_ok_and(|s| s.contains(SENTINEL))
}

fuzz_target!(|case: Case| {
    let registry = registry();
    let caps = registry.capabilities();
    let cap = &caps[usize::from(case.capability) % caps.len()];
    let surface = Surface::ALL[usize::from(case.surface) % Surface::ALL.len()];
    let frame = Frame::new(surface).with_actor(Actor {
        id: Some("u1".into()),
        ..Actor::default()
    });
    let opts = InvokeOptions {
        now_ms: NOW,
        audit: case.audit,
        audit_payloads: case.audit_payloads,
        span_payloads: case.audit_payloads,
    };
    let verdict = |over: bool| {
        if over {
            orpc_agent_core::limits::check(&too_deep())
        } else {
            Ok(())
        }
    };
    let mut inv = if case.resume {
        Invocation::resume(Arc::clone(registry), "apr_fuzz", frame, opts)
    } else if let Some(over) = case.measured {
        if case.by_index {
            Invocation::start_index_measured(
                Arc::clone(registry),
                cap.index,
                frame,
                opts,
                Some(verdict(over)),
            )
        } else {
            Invocation::start_measured(
                Arc::clone(registry),
                &cap.id,
                frame,
                opts,
                Some(verdict(over)),
            )
        }
    } else if case.by_index {
        Invocation::start_index(
            Arc::clone(registry),
            cap.index,
            case.input.payload(),
            frame,
            opts,
        )
    } else {
        Invocation::start(
            Arc::clone(registry),
            &cap.id,
            case.input.payload(),
            frame,
            opts,
        )
    };
    let mut handler_runs = 0u32;
    let mut gated = false;
    let mut last_outcome: Option<String> = None;
    for a in &case.answers {
        // What the machine shows never carries the unredacted output.
        match inv.step() {
            Step::Audit(record) => {
                let json = record.to_json();
                if inv.capability().is_some_and(|c| c.meta.redact.output) {
                    assert!(!contains_sentinel(&json), "audit record leaks: {json}");
                }
                assert!(!json.to_string().contains(SENTINEL) || json.get("output").is_some());
            }
            Step::Done(o) => {
                let s = format!("{o:?}");
                if let Some(prev) = &last_outcome {
                    assert_eq!(prev, &s, "a finished invocation changed its outcome");
                }
                last_outcome = Some(s);
            }
            Step::PersistApproval(_) => gated = true,
            Step::RunHandler { attempt, .. } => {
                handler_runs += 1;
                assert_eq!(attempt, handler_runs, "attempt numbering");
                assert!(!gated, "a gated call reached the handler");
                let max = inv
                    .capability()
                    .and_then(|c| c.meta.retry.as_ref())
                    .map_or(1, |r| r.max_attempts.saturating_add(1));
                assert!(
                    u64::from(handler_runs) <= u64::from(max),
                    "handler ran {handler_runs} times, max {max}"
                );
            }
            _ => {}
        }
        let was_done = inv.is_done();
        let answer = build(a, &inv);
        let fits = inv.answer(answer);
        if was_done {
            assert!(fits.is_err(), "a finished invocation accepted an answer");
        }
        if let Err(e) = fits {
            assert_eq!(e.code, ErrorCode::Internal);
            // Ended: done, or first the finished record it still owes
            // (every call that started is audited as finished, issue 14).
            let ended = match inv.step() {
                Step::Done(_) => true,
                Step::Audit(record) => record.event == AuditEvent::Finished,
                _ => false,
            };
            assert!(ended, "an out-of-turn answer must end the invocation");
        }
    }
    if let Some(outcome) = inv.take_outcome() {
        let redacts = inv.capability().is_some_and(|c| c.meta.redact.output);
        match &outcome {
            Outcome::Ok(Payload::Json(v)) if redacts => {
                assert!(!contains_sentinel(v), "unredacted output returned");
            }
            Outcome::Error(e) => {
                assert!(
                    !e.message.contains(SENTINEL),
                    "error message leaks: {}",
                    e.message
                );
                if e.code == ErrorCode::LimitExceeded {
                    assert_eq!(handler_runs, 0, "an over-limit input reached the handler");
                }
            }
            _ => {}
        }
        assert!(inv.take_outcome().is_none(), "outcome taken twice");
    }
});
