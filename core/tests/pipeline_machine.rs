#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The state machine and the tokio driver beyond the security invariants:
//! out-of-turn answers, retries and their timing, deadlines, cancellation,
//! shadow policies, approvals, audit records, host-held payloads.

use crate::pipeline_support;

use std::sync::Arc;
use std::time::Duration;

use orpc_agent_core::approval::{ApprovalRequest, Decision as ApprovalDecision};
use orpc_agent_core::ffi::answer_code;
use orpc_agent_core::pipeline::driver::Call;
use orpc_agent_core::pipeline::{
    Answer, AuditEvent, Decision, Invocation, InvokeOptions, Outcome, Payload, PolicyScope, Stage,
    Step, StepKind,
};
use orpc_agent_core::{
    Actor, CapabilityError, CapabilityRegistry, ErrorCode, Frame, Surface, TraceContext,
};
use pipeline_support::*;
use proptest::prelude::*;
use serde_json::{Value, json};

fn audited(now_ms: u64) -> InvokeOptions {
    InvokeOptions {
        now_ms,
        audit: true,
        audit_payloads: false,
        span_payloads: false,
    }
}

fn start(
    reg: &Arc<CapabilityRegistry>,
    name: &str,
    input: Payload,
    opts: InvokeOptions,
) -> Invocation {
    Invocation::start(Arc::clone(reg), name, input, Frame::new(Surface::Mcp), opts)
}

fn actor(id: &str) -> Actor {
    Actor {
        id: Some(id.into()),
        ..Actor::default()
    }
}

// ----- out-of-turn answers ------------------------------------------------

fn any_answer() -> impl Strategy<Value = Answer> {
    let err = || CapabilityError::new(ErrorCode::Internal, "x");
    prop_oneof![
        Just(Answer::InputValid(Payload::Host)),
        Just(Answer::InputValid(Payload::Json(json!({"amount": 2000})))),
        Just(Answer::InputInvalid("bad".into())),
        Just(Answer::PolicyDecision(Decision::Allow)),
        Just(Answer::PolicyDecision(Decision::Deny { reason: None })),
        Just(Answer::PolicyDecision(Decision::RequireApproval {
            approval_type: None,
            reason: None,
            expires_in_ms: Some(5)
        })),
        Just(Answer::PolicyDecision(Decision::Abstain)),
        Just(Answer::PolicyFailed("f".into())),
        Just(Answer::InputExported(json!({"amount": 2000}))),
        Just(Answer::Persisted),
        Just(Answer::StoreFailed(err())),
        Just(Answer::Consumed(Err(err()))),
        (0u64..100).prop_map(|t| Answer::HandlerOk {
            output: Payload::Host,
            now_ms: t
        }),
        (0u64..100, any::<bool>()).prop_map(|(t, r)| Answer::HandlerError {
            code: None,
            message: "m".into(),
            retryable: r,
            details: None,
            now_ms: t
        }),
        (0u64..100).prop_map(|t| Answer::HandlerTimedOut { now_ms: t }),
        (0u64..100).prop_map(|t| Answer::Cancelled { now_ms: t }),
        any::<bool>().prop_map(Answer::RetryOn),
        (0u64..100).prop_map(|t| Answer::Slept { now_ms: t }),
        Just(Answer::OutputValid(Payload::Host)),
        Just(Answer::OutputInvalid("o".into())),
        Just(Answer::Redacted(Payload::Json(json!(1)))),
        Just(Answer::RedactorFailed),
        Just(Answer::OutputExported(json!(1))),
        Just(Answer::Audited),
        any::<u8>().prop_map(|code| Answer::Malformed { code }),
    ]
}

fn busy_registry() -> Arc<CapabilityRegistry> {
    let m = with(
        meta(&["mcp"]),
        json!({"retry": {"maxAttempts": 3, "backoffMs": 1, "retryOn": true},
               "redact": {"output": true},
               "policies": [{"host": true}, {"when": {"input": ["/amount > 1000"]},
                             "decision": "requireApproval"}]}),
    );
    registry(
        json!([{"id": "a.b", "meta": m, "validateInput": true, "validateOutput": true}]),
        json!({"policies": [{"host": true, "mode": "shadow"}]}),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    /// Any sequence of answers: never a panic; an answer that does not fit
    /// ends the call INTERNAL (after its finished record, when it audits) and
    /// every answer after Done is refused
    /// without changing the outcome.
    #[test]
    fn arbitrary_answer_sequences_never_panic(
        answers in prop::collection::vec(any_answer(), 0..40),
        resume in any::<bool>(),
        audit in any::<bool>(),
    ) {
        let reg = busy_registry();
        let opts = InvokeOptions { now_ms: 0, audit, audit_payloads: audit , span_payloads: false};
        let mut inv = if resume {
            Invocation::resume(Arc::clone(&reg), "apr_x", Frame::new(Surface::Mcp), opts)
        } else {
            start(&reg, "a.b", Payload::Host, opts)
        };
        for a in answers {
            let was_done = inv.is_done();
            let before = match inv.step() {
                Step::Done(o) => Some(o.clone()),
                _ => None,
            };
            let r = inv.answer(a);
            if was_done {
                // A finished invocation keeps its outcome (issue 10).
                prop_assert!(r.is_err());
                match inv.step() {
                    Step::Done(o) => prop_assert_eq!(Some(o.clone()), before),
                    other => prop_assert!(false, "{:?}", other.kind()),
                }
            } else if let Err(e) = r {
                prop_assert_eq!(e.code, ErrorCode::Internal);
                // Ended: done, or first the finished record it still owes
                // (issue 14: every call that started is audited as finished).
                match inv.step() {
                    Step::Done(Outcome::Error(e)) => prop_assert_eq!(e.code, ErrorCode::Internal),
                    Step::Audit(r) => prop_assert_eq!(r.event, AuditEvent::Finished),
                    other => prop_assert!(false, "{:?}", other.kind()),
                }
            }
            let _ = inv.step();
            let _ = inv.step_kind();
        }
    }
}

#[test]
fn an_out_of_turn_answer_is_an_internal_error_not_a_panic() {
    let reg = registry(json!([{"id": "a.b", "meta": meta(&["mcp"])}]), Value::Null);
    let mut inv = start(&reg, "a.b", Payload::Host, InvokeOptions::at(0));
    assert_eq!(inv.step_kind(), StepKind::RunHandler);
    let e = inv.answer(Answer::Persisted).unwrap_err();
    assert_eq!(e.code, ErrorCode::Internal);
    assert!(
        e.message.contains("Persisted") && e.message.contains("RunHandler"),
        "{}",
        e.message
    );
    assert_eq!(inv.take_outcome(), Some(Outcome::Error(e)));
}

/// Delivers audit steps (recording each record) until the host has other work.
fn deliver_audits(inv: &mut Invocation, records: &mut Vec<orpc_agent_core::pipeline::AuditRecord>) {
    while let Step::Audit(r) = inv.step() {
        records.push((*r).clone());
        inv.answer(Answer::Audited).unwrap();
    }
}

#[test]
fn an_out_of_turn_answer_still_owes_the_finished_record() {
    let reg = registry(json!([{"id": "a.b", "meta": meta(&["mcp"])}]), Value::Null);
    let mut inv = start(&reg, "a.b", Payload::Host, audited(0));
    let mut records = Vec::new();
    deliver_audits(&mut inv, &mut records);
    assert_eq!(inv.step_kind(), StepKind::RunHandler);
    let e = inv.answer(Answer::Persisted).unwrap_err();
    deliver_audits(&mut inv, &mut records);
    let events: Vec<_> = records.iter().map(|r| (r.event, r.outcome)).collect();
    assert_eq!(
        events,
        [
            (AuditEvent::Started, None),
            (AuditEvent::Finished, Some("INTERNAL"))
        ]
    );
    assert_eq!(inv.take_outcome(), Some(Outcome::Error(e)));
}

#[test]
fn an_answer_code_the_core_cannot_read_ends_the_call_internal_at_any_step() {
    // A binding's answer from primitives the core does not know (a code
    // from a newer façade, a text it needs missing) is no answer to guess
    // at: the call ends INTERNAL and its finished record is owed.
    let reg = registry(json!([{"id": "a.b", "meta": meta(&["mcp"])}]), Value::Null);
    for (code, text) in [(250, None), (answer_code::INPUT_INVALID, None)] {
        let mut inv = start(&reg, "a.b", Payload::Host, audited(0));
        let mut records = Vec::new();
        deliver_audits(&mut inv, &mut records);
        assert_eq!(inv.step_kind(), StepKind::RunHandler);
        let answer = orpc_agent_core::ffi::answer(code, text, true, 1);
        assert!(matches!(answer, Answer::Malformed { .. }));
        let e = inv.answer(answer).unwrap_err();
        assert_eq!(e.code, ErrorCode::Internal);
        deliver_audits(&mut inv, &mut records);
        assert_eq!(records.last().unwrap().outcome, Some("INTERNAL"));
        assert_eq!(inv.take_outcome(), Some(Outcome::Error(e)));
    }
}

#[test]
fn an_abandoned_call_ends_internal_with_its_finished_record() {
    let reg = registry(json!([{"id": "a.b", "meta": meta(&["mcp"])}]), Value::Null);
    // Abandoned at the handler step: the finished record says INTERNAL.
    let mut inv = start(&reg, "a.b", Payload::Host, audited(0));
    let mut records = Vec::new();
    deliver_audits(&mut inv, &mut records);
    assert!(inv.abandon(7), "a finished record is owed");
    deliver_audits(&mut inv, &mut records);
    assert_eq!(records.len(), 2);
    assert_eq!(records[1].event, AuditEvent::Finished);
    assert_eq!(records[1].outcome, Some("INTERNAL"));
    assert_eq!(records[1].duration_ms, 7);
    let Some(Outcome::Error(e)) = inv.take_outcome() else {
        panic!("not an error")
    };
    assert_eq!(e.code, ErrorCode::Internal);
    assert_eq!(
        e.message,
        orpc_agent_core::pipeline::machine::ABANDONED_MESSAGE
    );

    // Abandoned while its finished record is pending: outcome and record kept.
    let mut inv = start(&reg, "a.b", Payload::Host, audited(0));
    deliver_audits(&mut inv, &mut Vec::new());
    inv.answer(Answer::HandlerOk {
        output: Payload::Host,
        now_ms: 1,
    })
    .unwrap();
    assert_eq!(inv.step_kind(), StepKind::Audit);
    assert!(!inv.abandon(2), "its pending record is not owed again");
    let mut records = Vec::new();
    deliver_audits(&mut inv, &mut records);
    assert_eq!(records[0].outcome, Some("ok"));
    assert_eq!(inv.take_outcome(), Some(Outcome::Ok(Payload::Host)));

    // Abandoned after its outcome was taken: nothing changes.
    assert!(!inv.abandon(3));
    assert!(inv.is_done());
    assert_eq!(inv.take_outcome(), None);
}

#[test]
fn an_input_the_host_cannot_convert_as_the_handler_starts_is_refused_by_the_core() {
    // No validator declared: stage 4 has nothing to run, and a host that
    // converts the input to the handler's type only at the handler step
    // (Swift) answers the failed conversion there.
    let reg = registry(json!([{"id": "a.b", "meta": meta(&["mcp"])}]), Value::Null);
    let issue = orpc_agent_core::pipeline::issues::InputIssue {
        path: vec!["when".into()],
        message: "Expected a date".into(),
    };
    for (answer, words) in [
        (
            Answer::InputIssues(vec![issue]),
            "The input is invalid: /when: Expected a date.",
        ),
        (
            Answer::InputValidatorFailed,
            orpc_agent_core::pipeline::issues::VALIDATOR_FAILED,
        ),
    ] {
        let mut inv = start(&reg, "a.b", Payload::Host, audited(0));
        let mut records = Vec::new();
        deliver_audits(&mut inv, &mut records);
        assert_eq!(inv.step_kind(), StepKind::RunHandler);
        inv.answer(answer).unwrap();
        deliver_audits(&mut inv, &mut records);
        let Some(Outcome::Error(e)) = inv.take_outcome() else {
            panic!("not an error")
        };
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::InvalidInput, words)
        );
        assert_eq!(records.last().unwrap().outcome, Some("INVALID_INPUT"));
        assert_eq!(inv.attempt(), 0, "no handler started");
    }
}

#[test]
fn a_cancellation_at_any_awaited_step_ends_the_call_cancelled() {
    // A host policy, then the handler: cancelled at the policy.
    let m = with(
        meta(&["mcp"]),
        json!({"policies": [{"name": "p", "host": true}]}),
    );
    let reg = registry(json!([{"id": "c.p", "meta": m}]), Value::Null);
    let mut inv = start(&reg, "c.p", Payload::Host, audited(0));
    while inv.step_kind() != StepKind::EvaluatePolicy {
        let a = permissive(&inv.step());
        inv.answer(a).unwrap();
    }
    inv.answer(Answer::Cancelled { now_ms: 40 }).unwrap();
    let mut records = Vec::new();
    deliver_audits(&mut inv, &mut records);
    assert_eq!(
        records.len(),
        1,
        "no started record: the handler never came near"
    );
    assert_eq!(records[0].outcome, Some("CANCELLED"));
    assert_eq!(records[0].attempts, 0);
    let Some(Outcome::Error(e)) = inv.take_outcome() else {
        panic!("not an error")
    };
    assert_eq!(e.code, ErrorCode::Cancelled);
}

// ----- retries --------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn backoff_doubles_from_backoff_ms() {
    let m = with(
        meta(&["mcp"]),
        json!({"retry": {"maxAttempts": 3, "backoffMs": 100}}),
    );
    let reg = registry(json!([{"id": "r.x", "meta": m}]), Value::Null);
    let h = Fixture::new(Behaviour::FailRetryableNTimes(10));
    let d = builder(&reg).handler("r.x", h.clone()).build().unwrap();
    let t0 = tokio::time::Instant::now();
    let o = d
        .invoke("r.x", json!({}), Call::new(Frame::new(Surface::Mcp)))
        .await;
    assert_eq!(error_of(&o).code, ErrorCode::ExecutionFailed);
    let starts: Vec<u64> = h
        .log
        .lock()
        .unwrap()
        .iter()
        .map(|c| u64::try_from((c.at - t0).as_millis()).unwrap())
        .collect();
    assert_eq!(
        starts,
        [0, 100, 300, 700],
        "1 + maxAttempts attempts, waits 100, 200, 400"
    );
}

#[test]
fn no_backoff_sleep_ends_past_the_deadline() {
    let m = with(
        meta(&["mcp"]),
        json!({"timeoutMs": 250, "retry": {"maxAttempts": 5, "backoffMs": 100}}),
    );
    let reg = registry(json!([{"id": "r.x", "meta": m}]), Value::Null);
    let mut inv = start(&reg, "r.x", Payload::Host, InvokeOptions::at(1000));
    let mut sleeps = Vec::new();
    let mut now = 1000;
    let (o, _) = drive_sync(&mut inv, |s| match s {
        Step::RunHandler { deadline_at_ms, .. } => {
            assert_eq!(*deadline_at_ms, 1250);
            now += 10;
            Answer::HandlerError {
                code: Some(ErrorCode::ExecutionFailed),
                message: "t".into(),
                retryable: true,
                details: None,
                now_ms: now,
            }
        }
        Step::Sleep { ms } => {
            sleeps.push(*ms);
            now += ms;
            Answer::Slept { now_ms: now }
        }
        other => panic!("{:?}", other.kind()),
    });
    // 1010 fail, sleep 100 → 1110, 1120 fail, 1120+200 ≥ 1250 → stop.
    assert_eq!(sleeps, [100]);
    assert_eq!(inv.attempt(), 2);
    assert_eq!(error_of(&o).code, ErrorCode::ExecutionFailed);
}

#[test]
fn retry_on_is_asked_only_for_retryable_errors_and_can_refuse() {
    let m = with(
        meta(&["mcp"]),
        json!({"retry": {"maxAttempts": 2, "backoffMs": 5, "retryOn": true}}),
    );
    let reg = registry(json!([{"id": "r.x", "meta": m}]), Value::Null);
    let fail = |retryable| {
        move |s: &Step<'_>| match s {
            Step::RunHandler { .. } => Answer::HandlerError {
                code: Some(ErrorCode::ExecutionFailed),
                message: "x".into(),
                retryable,
                details: None,
                now_ms: 0,
            },
            Step::AskRetryOn { error } => {
                assert!(error.retryable);
                Answer::RetryOn(false)
            }
            other => panic!("{:?}", other.kind()),
        }
    };
    let mut inv = start(&reg, "r.x", Payload::Host, InvokeOptions::at(0));
    let (_, steps) = drive_sync(&mut inv, fail(false));
    assert_eq!(
        steps,
        [StepKind::RunHandler],
        "non-retryable: retryOn not consulted"
    );
    let mut inv = start(&reg, "r.x", Payload::Host, InvokeOptions::at(0));
    let (o, steps) = drive_sync(&mut inv, fail(true));
    assert_eq!(
        steps,
        [StepKind::RunHandler, StepKind::AskRetryOn],
        "retryOn said no"
    );
    assert_eq!(error_of(&o).code, ErrorCode::ExecutionFailed);
    // retryOn saying yes: backoff, then the next attempt.
    let mut inv = start(&reg, "r.x", Payload::Host, InvokeOptions::at(0));
    let mut n = 0;
    let (o, steps) = drive_sync(&mut inv, |s| match s {
        Step::RunHandler { attempt, .. } => {
            n += 1;
            assert_eq!(*attempt, n);
            if n < 2 {
                Answer::HandlerError {
                    code: Some(ErrorCode::Timeout),
                    message: "x".into(),
                    retryable: true,
                    details: None,
                    now_ms: 0,
                }
            } else {
                Answer::HandlerOk {
                    output: Payload::Host,
                    now_ms: 5,
                }
            }
        }
        Step::AskRetryOn { .. } => Answer::RetryOn(true),
        Step::Sleep { ms } => Answer::Slept { now_ms: *ms },
        other => panic!("{:?}", other.kind()),
    });
    assert_eq!(o, Outcome::Ok(Payload::Host));
    assert_eq!(
        steps,
        [
            StepKind::RunHandler,
            StepKind::AskRetryOn,
            StepKind::Sleep,
            StepKind::RunHandler
        ]
    );
}

#[test]
fn a_timed_out_attempt_is_not_retried() {
    let m = with(
        meta(&["mcp"]),
        json!({"retry": {"maxAttempts": 3, "backoffMs": 0}}),
    );
    let reg = registry(json!([{"id": "r.x", "meta": m}]), Value::Null);
    let mut inv = start(&reg, "r.x", Payload::Host, InvokeOptions::at(0));
    let (o, steps) = drive_sync(&mut inv, |s| match s {
        Step::RunHandler { .. } => Answer::HandlerTimedOut { now_ms: 30_000 },
        other => panic!("{:?}", other.kind()),
    });
    assert_eq!(error_of(&o).code, ErrorCode::Timeout);
    assert_eq!(steps, [StepKind::RunHandler]);
}

/// A result or an error that arrives at or after the deadline is the
/// deadline's TIMEOUT, decided by the machine from the time the answer
/// carries, whatever the host's timer did (issue 14: Node accepted a 300 ms
/// synchronous handler's result with a 100 ms deadline). One millisecond
/// before the deadline still counts.
#[test]
fn a_late_result_or_error_is_a_timeout_decided_by_the_machine() {
    let m = with(meta(&["mcp"]), json!({"timeoutMs": 100}));
    let reg = registry(json!([{"id": "l.x", "meta": m}]), Value::Null);
    let late_ok = |now_ms| Answer::HandlerOk {
        output: Payload::Json(json!("late")),
        now_ms,
    };
    let late_err = |now_ms| Answer::HandlerError {
        code: Some(ErrorCode::NotFound),
        message: "no such order".into(),
        retryable: false,
        details: None,
        now_ms,
    };
    for (answer, want) in [
        (late_ok(1_100), Some(ErrorCode::Timeout)),
        (late_ok(5_000), Some(ErrorCode::Timeout)),
        (late_err(1_100), Some(ErrorCode::Timeout)),
        (late_ok(1_099), None),
        (late_err(1_099), Some(ErrorCode::NotFound)),
    ] {
        let mut inv = start(&reg, "l.x", Payload::Host, InvokeOptions::at(1_000));
        let mut answer = Some(answer);
        let (o, _) = drive_sync(&mut inv, |s| match s {
            Step::RunHandler { deadline_at_ms, .. } => {
                assert_eq!(*deadline_at_ms, 1_100);
                answer.take().unwrap()
            }
            other => permissive(other),
        });
        match want {
            Some(code) => assert_eq!(error_of(&o).code, code, "{o:?}"),
            None => assert_eq!(ok_json(&o), &json!("late"), "{o:?}"),
        }
    }
}

/// Every hook the host waits for is bounded by the call's deadline: a
/// validator, output validator or redactor still running then is answered
/// `DeadlinePassed`, and the call is TIMEOUT, nothing of the output shown
/// (issue 14).
#[test]
fn a_hook_that_never_answers_ends_at_the_call_deadline() {
    let m = with(
        meta(&["mcp"]),
        json!({"timeoutMs": 100, "redact": {"output": true}}),
    );
    let reg = registry(
        json!([{"id": "h.x", "meta": m, "validateInput": true, "validateOutput": true}]),
        Value::Null,
    );
    for stuck in [
        StepKind::ValidateInput,
        StepKind::ValidateOutput,
        StepKind::RedactOutput,
    ] {
        let mut inv = start(
            &reg,
            "h.x",
            Payload::Json(json!({"a": 1})),
            InvokeOptions::at(1_000),
        );
        assert_eq!(inv.call_deadline_ms(), 1_100, "known from the start");
        let (o, steps) = drive_sync(&mut inv, |s| {
            if s.kind() == stuck {
                Answer::DeadlinePassed { now_ms: 1_100 }
            } else {
                permissive(s)
            }
        });
        assert_eq!(error_of(&o).code, ErrorCode::Timeout, "{stuck:?}: {o:?}");
        assert_eq!(
            steps.last(),
            Some(&stuck),
            "{stuck:?}: nothing after the stuck hook"
        );
    }
}

/// A TIMEOUT tells the caller it may call again (`retryable`) unless a
/// handler may have run and running it again is not safe: a write that is
/// not idempotent may have done its work before the deadline. A write whose
/// handler never started (a validator, or the audit before it, spent the
/// deadline) is safe to call again; so is a read or an idempotent write.
#[test]
fn a_timeout_is_retryable_unless_a_write_may_have_run() {
    let stuck_at = |stuck: StepKind| {
        move |s: &Step<'_>| {
            if s.kind() != stuck {
                permissive(s)
            } else if stuck == StepKind::RunHandler {
                Answer::HandlerTimedOut { now_ms: 1_100 }
            } else {
                Answer::DeadlinePassed { now_ms: 1_100 }
            }
        }
    };
    for (effect, idempotent, repeatable) in [
        ("write", false, false),
        ("write", true, true),
        ("read", false, true),
        ("none", false, true),
    ] {
        let m = with(
            meta(&["mcp"]),
            json!({"sideEffect": effect, "idempotent": idempotent, "timeoutMs": 100,
                   "redact": {"output": true}}),
        );
        let reg = registry(
            json!([{"id": "t.x", "meta": m, "validateInput": true, "validateOutput": true}]),
            Value::Null,
        );
        let call = || start(&reg, "t.x", Payload::Json(json!({})), audited(1_000));
        for (stuck, handler_ran) in [
            (StepKind::ValidateInput, false),
            (StepKind::RunHandler, true),
            (StepKind::ValidateOutput, true),
            (StepKind::RedactOutput, true),
        ] {
            let mut inv = call();
            let (o, _) = drive_sync(&mut inv, stuck_at(stuck));
            let e = error_of(&o);
            assert_eq!(e.code, ErrorCode::Timeout, "{effect} {stuck:?}");
            assert_eq!(
                e.retryable,
                repeatable || !handler_ran,
                "{effect} {stuck:?}"
            );
        }
        // The deadline passes before the handler starts: it never runs.
        let mut inv = call();
        loop {
            let step = inv.step();
            if step.kind() == StepKind::RunHandler {
                break;
            }
            let answer = permissive(&step);
            inv.answer(answer).unwrap();
        }
        inv.at(1_100);
        let (o, steps) = drive_sync(&mut inv, permissive);
        assert!(!steps.contains(&StepKind::RunHandler), "{steps:?}");
        let e = error_of(&o);
        assert_eq!(
            (e.code, e.retryable),
            (ErrorCode::Timeout, true),
            "{effect}"
        );
    }
}

/// A plain thrown error (no code) is never retried, whatever `retryable`
/// the host reports for it: only the application's own CapabilityError can
/// say a retry is worth it (issue 14).
#[test]
fn a_plain_error_is_never_retryable_whatever_the_host_says() {
    let m = with(
        meta(&["mcp"]),
        json!({"retry": {"maxAttempts": 3, "backoffMs": 0}}),
    );
    let reg = registry(json!([{"id": "r.plain", "meta": m}]), Value::Null);
    let mut inv = start(&reg, "r.plain", Payload::Host, InvokeOptions::at(0));
    let (o, steps) = drive_sync(&mut inv, |s| match s {
        Step::RunHandler { .. } => Answer::HandlerError {
            code: None,
            message: "ECONNRESET".into(),
            retryable: true,
            details: None,
            now_ms: 1,
        },
        other => permissive(other),
    });
    let e = error_of(&o);
    assert_eq!(e.code, ErrorCode::ExecutionFailed);
    assert!(!e.retryable);
    assert_eq!(steps, [StepKind::RunHandler], "one attempt, no retry");
}

/// Details reach the caller only with the handler's own error: a plain
/// throw (no code) or a code the core does not know never shows them,
/// whatever the host sends (`ffi::handler_error` passes them on; the
/// invocation decides).
#[test]
fn a_plain_error_never_shows_details() {
    let reg = registry(
        json!([{"id": "r.plain", "meta": meta(&["mcp"])}]),
        Value::Null,
    );
    let details = Some(r#"{"token":"SENTINEL"}"#);
    for (code, want) in [
        (None, None),
        (Some("NOPE"), None),
        (Some("LIMIT_EXCEEDED"), Some(json!({"token": "SENTINEL"}))),
    ] {
        let mut inv = start(&reg, "r.plain", Payload::Host, InvokeOptions::at(0));
        let (o, _) = drive_sync(&mut inv, |s| match s {
            Step::RunHandler { .. } => {
                orpc_agent_core::ffi::handler_error(code, "TypeError".into(), false, details, 1)
            }
            other => permissive(other),
        });
        assert_eq!(error_of(&o).details, want, "{code:?}");
    }
}

// ----- handler errors, validation ---------------------------------------

#[tokio::test(start_paused = true)]
async fn handler_errors_keep_their_code_and_plain_failures_leak_nothing() {
    let caps = json!([
        {"id": "h.own", "meta": meta(&["mcp"])},
        {"id": "h.throw", "meta": meta(&["mcp"])},
        {"id": "h.in", "meta": meta(&["mcp"]), "validateInput": true},
        {"id": "h.out", "meta": meta(&["mcp"]), "validateOutput": true},
    ]);
    let reg = registry(caps, Value::Null);
    let schema = json!({"required": ["q"], "properties": {"q": "string"}});
    let d = builder(&reg)
        .handler(
            "h.own",
            Fixture::new(Behaviour::FailWithCode {
                code: ErrorCode::LimitExceeded,
                retryable: false,
                details: None,
            }),
        )
        .handler(
            "h.throw",
            Fixture::new(Behaviour::Throw("password=hunter2".into())),
        )
        .handler("h.in", Fixture::new(Behaviour::Echo))
        .handler("h.out", Fixture::new(Behaviour::Return(json!({"q": 5}))))
        .input_validator("h.in", Arc::new(MiniSchema(schema.clone())))
        .output_validator("h.out", Arc::new(MiniSchema(schema)))
        .build()
        .unwrap();
    let c = || Call::new(Frame::new(Surface::Mcp));
    let e = error_of(&d.invoke("h.own", json!({}), c()).await).clone();
    assert_eq!(
        (e.code, e.message.as_str()),
        (ErrorCode::LimitExceeded, "the handler's own error")
    );
    let e = error_of(&d.invoke("h.throw", json!({}), c()).await).clone();
    assert_eq!(e.code, ErrorCode::ExecutionFailed);
    assert!(!e.message.contains("hunter2"));
    let e = error_of(&d.invoke("h.in", json!({"q": 1}), c()).await).clone();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(
        e.message.contains("`q` must be a string"),
        "the model can fix its call: {}",
        e.message
    );
    assert_eq!(
        ok_json(&d.invoke("h.in", json!({"q": "x"}), c()).await),
        &json!({"q": "x"})
    );
    let e = error_of(&d.invoke("h.out", json!({}), c()).await).clone();
    assert_eq!(e.code, ErrorCode::OutputInvalid);
}

// ----- deadlines and cancellation -------------------------------------------

#[tokio::test(start_paused = true)]
async fn cancellation_during_the_handler_and_during_backoff() {
    let caps = json!([
        {"id": "c.slow", "meta": meta(&["mcp"])},
        {"id": "c.retry", "meta": with(meta(&["mcp"]), json!({"retry": {"maxAttempts": 2, "backoffMs": 1000}}))},
    ]);
    let reg = registry(caps, Value::Null);
    let slow = Fixture::new(Behaviour::Delay(5_000));
    let retry = Fixture::new(Behaviour::FailRetryableNTimes(5));
    let d = builder(&reg)
        .handler("c.slow", slow.clone())
        .handler("c.retry", retry.clone())
        .build()
        .unwrap();
    for (id, at) in [("c.slow", 40), ("c.retry", 500)] {
        let call = Call::new(Frame::new(Surface::Mcp));
        let token = call.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(at)).await;
            token.cancel();
        });
        let t0 = tokio::time::Instant::now();
        let o = d.invoke(id, json!({}), call).await;
        assert_eq!(error_of(&o).code, ErrorCode::Cancelled, "{id}");
        assert_eq!(tokio_ms(t0), at, "{id} ended when cancelled");
    }
    tokio::task::yield_now().await;
    assert_eq!(*slow.saw_cancel_at_ms.lock().unwrap(), Some(40));
    assert_eq!(retry.calls(), 1, "no attempt after the cancelled backoff");
}

// ----- policies ------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn shadow_policies_are_recorded_not_enforced() {
    let opts = json!({"policies": [
        {"name": "shadow-deny", "mode": "shadow", "decision": "deny", "reason": "would deny"},
        {"name": "shadow-host", "mode": "shadow", "host": true},
    ]});
    let m = with(
        meta(&["mcp"]),
        json!({"policies": [{"name": "allow-all", "decision": "allow"}]}),
    );
    let reg = registry(json!([{"id": "s.x", "meta": m}]), opts);
    let audit = Arc::new(Collector::default());
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let d = builder(&reg)
        .handler("s.x", Fixture::new(Behaviour::Echo))
        .runtime_policy(
            1,
            Arc::new(FixedPolicy {
                name: "h".into(),
                answer: Err("broken".into()),
                delay_ms: 0,
                order,
            }),
        )
        .audit(audit.clone(), false)
        .build()
        .unwrap();
    let o = d
        .invoke("s.x", json!({"a": 1}), Call::new(Frame::new(Surface::Mcp)))
        .await;
    assert_eq!(ok_json(&o), &json!({"a": 1}));
    let records = audit.take();
    let finished = records
        .iter()
        .find(|r| r.event == AuditEvent::Finished)
        .unwrap();
    let p: Vec<Value> = finished
        .policies
        .iter()
        .map(|p| serde_json::to_value(p).unwrap())
        .collect();
    assert_eq!(p[0]["decision"], "deny");
    assert_eq!(p[0]["mode"], "shadow");
    assert_eq!(p[0]["reason"], "would deny");
    assert_eq!(
        (
            p[1]["decision"].clone(),
            p[1]["failed"].clone(),
            p[1]["host"].clone()
        ),
        (json!("deny"), json!(true), json!(true))
    );
    assert_eq!(
        (
            p[2]["scope"].clone(),
            p[2]["decision"].clone(),
            p[2]["mode"].clone()
        ),
        (json!("capability"), json!("allow"), json!("enforce"))
    );
}

#[test]
fn allow_does_not_override_a_later_deny_or_a_static_approval() {
    let caps = json!([
        {"id": "p.deny", "meta": with(meta(&["mcp"]), json!({"policies": [{"decision": "deny", "reason": "stop"}]}))},
        {"id": "p.gate", "meta": with(meta(&["mcp"]), json!({"approval": {"required": true}}))},
    ]);
    let reg = registry(caps, json!({"policies": [{"decision": "allow"}]}));
    let mut inv = start(&reg, "p.deny", Payload::Host, InvokeOptions::at(0));
    let (o, _) = drive_sync(&mut inv, permissive);
    let e = error_of(&o);
    assert_eq!(e.code, ErrorCode::PolicyDenied);
    assert!(e.message.contains("stop"));
    assert_eq!(e.details.as_ref().unwrap()["scope"], "capability");
    let mut inv = start(
        &reg,
        "p.gate",
        Payload::Json(json!({})),
        InvokeOptions::at(0),
    );
    let (o, steps) = drive_sync(&mut inv, permissive);
    assert!(matches!(o, Outcome::ApprovalRequired(_)));
    assert_eq!(steps, [StepKind::PersistApproval]);
}

#[test]
fn a_later_deny_beats_an_earlier_require_approval() {
    let m = with(
        meta(&["mcp"]),
        json!({"policies": [
        {"decision": "requireApproval"}, {"name": "later", "decision": "deny", "reason": "no"}]}),
    );
    let reg = registry(json!([{"id": "p.x", "meta": m}]), Value::Null);
    let mut inv = start(&reg, "p.x", Payload::Json(json!({})), InvokeOptions::at(0));
    let (o, steps) = drive_sync(&mut inv, permissive);
    assert_eq!(error_of(&o).code, ErrorCode::PolicyDenied);
    assert!(steps.is_empty());
}

#[test]
fn declarative_predicates_ask_for_host_held_input_only_when_needed() {
    let caps = json!([
        {"id": "p.plain", "meta": with(meta(&["mcp"]), json!({"policies": [{"when": {"risk": ["low"]}, "decision": "allow"}]}))},
        {"id": "p.pred", "meta": with(meta(&["mcp"]), json!({"policies": [{"when": {"input": ["/amount > 10"]}, "decision": "deny"}]}))},
    ]);
    let reg = registry(caps, Value::Null);
    let mut inv = start(&reg, "p.plain", Payload::Host, InvokeOptions::at(0));
    let (o, steps) = drive_sync(&mut inv, permissive);
    assert_eq!(o, Outcome::Ok(Payload::Host));
    assert_eq!(
        steps,
        [StepKind::RunHandler],
        "no export, no conversion on the hot path"
    );
    let mut inv = start(&reg, "p.pred", Payload::Host, InvokeOptions::at(0));
    let (o, steps) = drive_sync(&mut inv, |s| match s {
        Step::ExportInput => Answer::InputExported(json!({"amount": 11})),
        other => permissive(other),
    });
    assert_eq!(error_of(&o).code, ErrorCode::PolicyDenied);
    assert_eq!(steps, [StepKind::ExportInput]);
}

#[test]
fn host_policies_get_scope_index_and_the_capability_timeout() {
    let m = with(
        meta(&["mcp"]),
        json!({"timeoutMs": 1234, "policies": [{"decision": "allow"}, {"host": true}]}),
    );
    let reg = registry(
        json!([{"id": "p.x", "meta": m}]),
        json!({"policies": [{"host": true}]}),
    );
    let mut inv = start(&reg, "p.x", Payload::Host, InvokeOptions::at(0));
    let mut seen = Vec::new();
    drive_sync(&mut inv, |s| {
        if let Step::EvaluatePolicy {
            scope,
            index,
            timeout_ms,
            ..
        } = s
        {
            seen.push((*scope, *index, *timeout_ms));
        }
        permissive(s)
    });
    assert_eq!(
        seen,
        [
            (PolicyScope::Runtime, 0, 1234),
            (PolicyScope::Capability, 1, 1234)
        ]
    );
}

// ----- approvals ----------------------------------------------------------

/// `pay.send`, exposed on MCP, that always requires an approval.
fn pay_send_registry() -> Arc<CapabilityRegistry> {
    let m = with(meta(&["mcp"]), json!({"approval": {"required": true}}));
    registry(json!([{"id": "pay.send", "meta": m}]), Value::Null)
}

/// [`pay_send_registry`] and the request a call of `{"amount": 1}` left
/// pending.
fn pending_pay_send() -> (Arc<CapabilityRegistry>, Box<ApprovalRequest>) {
    let reg = pay_send_registry();
    let mut inv = start(
        &reg,
        "pay.send",
        Payload::Json(json!({"amount": 1})),
        InvokeOptions::at(0),
    );
    let (o, _) = drive_sync(&mut inv, permissive);
    let Outcome::ApprovalRequired(req) = o else {
        panic!("pay.send did not ask for an approval: {o:?}")
    };
    (reg, req)
}

fn normalised(mut r: ApprovalRequest) -> ApprovalRequest {
    r.id = String::new();
    r
}

#[tokio::test(start_paused = true)]
async fn static_and_policy_approvals_produce_identical_requests_and_round_trip() {
    let stat = with(
        meta(&["mcp"]),
        json!({"approval": {"required": true, "type": "manager", "expiresInMs": 5000}}),
    );
    let pol = with(
        meta(&["mcp"]),
        json!({"policies": [{"decision": "requireApproval", "approvalType": "manager", "expiresInMs": 5000}]}),
    );
    let mut requests = Vec::new();
    for m in [stat, pol] {
        let reg = registry(json!([{"id": "pay.send", "meta": m}]), Value::Null);
        let h = Fixture::new(Behaviour::Echo);
        let d = builder(&reg)
            .handler("pay.send", h.clone())
            .build()
            .unwrap();
        let frame = Frame::new(Surface::Mcp).with_actor(actor("alice"));
        let o = d
            .invoke("pay.send", json!({"amount": 10}), Call::new(frame.clone()))
            .await;
        let Outcome::ApprovalRequired(req) = o else {
            panic!("{o:?}")
        };
        assert_eq!(h.calls(), 0);
        assert_eq!(
            d.store().get(&req.id).await.unwrap().as_ref(),
            Some(&*req),
            "persisted as returned"
        );
        let pending = d.resume(&req.id, Call::new(frame.clone())).await;
        assert_eq!(error_of(&pending).code, ErrorCode::ApprovalPending);
        d.decide(&req.id, ApprovalDecision::Approve, Some("bob"), Some("ok"))
            .await
            .unwrap();
        let done = d.resume(&req.id, Call::new(frame)).await;
        assert_eq!(ok_json(&done), &json!({"amount": 10}));
        requests.push(normalised(*req));
    }
    assert_eq!(requests[0], requests[1]);
    assert_eq!(requests[0].approval_type.as_deref(), Some("manager"));
    assert_eq!(requests[0].expires_at_ms - requests[0].created_at_ms, 5000);
}

#[tokio::test(start_paused = true)]
async fn rejected_and_unknown_requests_fail_with_their_own_codes() {
    let reg = pay_send_registry();
    let d = builder(&reg)
        .handler("pay.send", Fixture::new(Behaviour::Echo))
        .build()
        .unwrap();
    let c = || Call::new(Frame::new(Surface::Mcp).with_actor(actor("alice")));
    let Outcome::ApprovalRequired(req) = d.invoke("pay.send", json!({}), c()).await else {
        panic!()
    };
    d.decide(&req.id, ApprovalDecision::Reject, Some("bob"), Some("no"))
        .await
        .unwrap();
    assert_eq!(
        error_of(&d.resume(&req.id, c()).await).code,
        ErrorCode::ApprovalRejected
    );
    let unknown = "apr_00000000000000000000000000000000";
    assert_eq!(
        error_of(&d.resume(unknown, c()).await).code,
        ErrorCode::ApprovalNotFound
    );
}

#[tokio::test(start_paused = true)]
async fn the_approver_must_differ_when_the_registry_says_so() {
    let m = with(meta(&["mcp"]), json!({"approval": {"required": true}}));
    let reg = registry(
        json!([{"id": "pay.send", "meta": m}]),
        json!({"approverMustDiffer": true}),
    );
    let d = builder(&reg)
        .handler("pay.send", Fixture::new(Behaviour::Echo))
        .build()
        .unwrap();
    let c = || Call::new(Frame::new(Surface::Mcp).with_actor(actor("alice")));
    let Outcome::ApprovalRequired(req) = d.invoke("pay.send", json!({}), c()).await else {
        panic!()
    };
    let e = d
        .decide(&req.id, ApprovalDecision::Approve, Some("alice"), None)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PolicyDenied);
    let e = d
        .decide(&req.id, ApprovalDecision::Approve, None, None)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PolicyDenied);
    d.decide(&req.id, ApprovalDecision::Approve, Some("bob"), None)
        .await
        .unwrap();
    assert!(matches!(d.resume(&req.id, c()).await, Outcome::Ok(_)));
}

#[test]
fn resume_checks_the_hash_of_the_stored_input_in_the_machine() {
    let (reg, req) = pending_pay_send();
    for (tamper, code) in [
        (json!({"amount": 1}), None),
        (json!({"amount": 2}), Some(ErrorCode::ApprovalInvalid)),
    ] {
        let mut r = (*req).clone();
        r.input = tamper;
        let mut inv = Invocation::resume(
            Arc::clone(&reg),
            &r.id.clone(),
            Frame::new(Surface::Direct),
            InvokeOptions::at(10),
        );
        assert!(matches!(inv.step(), Step::ConsumeApproval { id, requester: None } if id == r.id));
        inv.answer(Answer::Consumed(Ok(Box::new(r)))).unwrap();
        let (o, _) = drive_sync(&mut inv, permissive);
        match code {
            None => assert!(matches!(o, Outcome::Ok(_)), "{o:?}"),
            Some(c) => assert_eq!(error_of(&o).code, c),
        }
    }
    // A store answering with another request than the one asked for.
    let mut inv = Invocation::resume(
        Arc::clone(&reg),
        "apr_ffffffffffffffffffffffffffffffff",
        Frame::new(Surface::Mcp),
        InvokeOptions::at(10),
    );
    inv.answer(Answer::Consumed(Ok(req))).unwrap();
    let (o, _) = drive_sync(&mut inv, permissive);
    assert_eq!(error_of(&o).code, ErrorCode::ApprovalInvalid);
}

#[test]
fn an_approved_input_the_host_cannot_convert_is_the_cores_stored_input_rule_however_reported() {
    // A host that converts the input only as the handler starts reports a
    // failed conversion the same way for a fresh call and a resumed one:
    // the core, which knows it resumes, applies the approved input's rule.
    let (reg, req) = pending_pay_send();
    let issue = orpc_agent_core::pipeline::issues::InputIssue {
        path: vec!["amount".into()],
        message: "Expected a string".into(),
    };
    for answer in [
        Answer::InputIssues(vec![issue]),
        Answer::InputInvalid("bad".into()),
        Answer::InputValidatorFailed,
        Answer::StoredInputUnusable { now_ms: 11 },
    ] {
        let mut inv = Invocation::resume(
            Arc::clone(&reg),
            &req.id.clone(),
            Frame::new(Surface::Mcp),
            InvokeOptions::at(10),
        );
        inv.answer(Answer::Consumed(Ok(req.clone()))).unwrap();
        assert_eq!(inv.step_kind(), StepKind::RunHandler);
        inv.answer(answer).unwrap();
        let Some(Outcome::Error(e)) = inv.take_outcome() else {
            panic!("not an error")
        };
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                ErrorCode::ExecutionFailed,
                orpc_agent_core::pipeline::machine::STORED_INPUT_UNUSABLE_MESSAGE
            )
        );
        assert_eq!(inv.attempt(), 0, "no handler started");
    }
}

#[test]
fn a_store_failure_at_persist_fails_closed() {
    let reg = pay_send_registry();
    let mut inv = start(
        &reg,
        "pay.send",
        Payload::Json(json!({})),
        InvokeOptions::at(0),
    );
    let (o, _) = drive_sync(&mut inv, |s| match s {
        Step::PersistApproval(_) => {
            Answer::StoreFailed(CapabilityError::new(ErrorCode::Internal, "store down"))
        }
        other => permissive(other),
    });
    assert_eq!(error_of(&o).code, ErrorCode::Internal);
}

#[tokio::test(start_paused = true)]
async fn redact_approval_input_uses_the_recorded_surface_and_actor() {
    let caps = json!([
        {"id": "a.red", "meta": with(meta(&["mcp"]), json!({"approval": {"required": true}, "redact": {"approvalInput": true}}))},
        {"id": "a.plain", "meta": with(meta(&["mcp"]), json!({"approval": {"required": true}}))},
    ]);
    let reg = registry(caps, Value::Null);
    let red = MaskFields::new(&["card"]);
    let d = builder(&reg)
        .handler("a.red", Fixture::new(Behaviour::Echo))
        .handler("a.plain", Fixture::new(Behaviour::Echo))
        .redact_approval_input("a.red", red.clone())
        .build()
        .unwrap();
    let c = || Call::new(Frame::new(Surface::Mcp).with_actor(actor("alice")));
    let input = json!({"card": "4111", "amount": 3});
    let Outcome::ApprovalRequired(req) = d.invoke("a.red", input.clone(), c()).await else {
        panic!()
    };
    assert_eq!(
        d.redact_approval_input(&req, None).await.unwrap(),
        json!({"card": "***", "amount": 3})
    );
    assert_eq!(
        red.seen.lock().unwrap()[0],
        (Surface::Mcp, "a.red".into(), Some("alice".into()))
    );
    let Outcome::ApprovalRequired(req) = d.invoke("a.plain", input.clone(), c()).await else {
        panic!()
    };
    assert_eq!(d.redact_approval_input(&req, None).await.unwrap(), input);
}

// ----- audit -----------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn one_finished_record_per_invocation_plus_started_when_executed() {
    let m = with(
        meta(&["mcp"]),
        json!({"redact": {"output": true}, "policies": [{"name": "p", "decision": "allow"}]}),
    );
    let reg = registry(json!([{"id": "au.x", "meta": m}]), Value::Null);
    let audit = Arc::new(Collector::default());
    let d = builder(&reg)
        .handler(
            "au.x",
            Fixture::new(Behaviour::Return(json!({"secret": "s", "ok": 1}))),
        )
        .redact_output("au.x", MaskFields::new(&["secret"]))
        .audit(audit.clone(), true)
        .build()
        .unwrap();
    let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut frame = Frame::new(Surface::Mcp).with_actor(actor("alice"));
    frame.trace = Some(TraceContext {
        traceparent: tp.into(),
        tracestate: Some("k=v".into()),
    });
    frame.request_id = Some("req-1".into());
    d.invoke("au_x", json!({"in": 1}), Call::new(frame.clone()))
        .await;
    let r = audit.take();
    assert_eq!(
        r.iter().map(|r| r.event).collect::<Vec<_>>(),
        [AuditEvent::Started, AuditEvent::Finished]
    );
    let f = r[1].to_json();
    assert_eq!(f["capabilityId"], "au.x");
    assert_eq!(f["requested"], "au_x");
    assert_eq!(f["surface"], "mcp");
    assert_eq!(f["actorId"], "alice");
    assert_eq!(f["outcome"], "ok");
    assert_eq!(f["stage"], 14);
    assert_eq!(f["attempts"], 1);
    assert_eq!(f["traceparent"], tp);
    assert_eq!(f["requestId"], "req-1");
    assert_eq!(f["output"], json!({"secret": "***", "ok": 1}));
    assert_eq!(f["policies"][0]["name"], "p");
    assert!(!f.to_string().contains("\"in\""), "never the input");
    assert_eq!(r[0].stage, Stage::AuditStarted);
    assert_eq!(r[0].outcome, None);

    // Early failure: exactly one record; an invalid traceparent is ignored.
    frame.trace = Some(TraceContext {
        traceparent: "garbage".into(),
        tracestate: None,
    });
    let o = d.invoke("nope", json!({}), Call::new(frame)).await;
    assert_eq!(error_of(&o).code, ErrorCode::NotFound);
    let r = audit.take();
    assert_eq!(r.len(), 1);
    let f = r[0].to_json();
    assert_eq!(
        (
            f["outcome"].clone(),
            f["stage"].clone(),
            f["traceparent"].clone()
        ),
        (json!("NOT_FOUND"), json!(1), Value::Null)
    );
    assert_eq!(f["attempts"], 0);
}

#[test]
fn host_held_output_is_exported_for_audit_only_after_redaction() {
    let m = with(meta(&["mcp"]), json!({"redact": {"output": true}}));
    let reg = registry(json!([{"id": "o.x", "meta": m}]), Value::Null);
    let opts = InvokeOptions {
        now_ms: 0,
        audit: true,
        audit_payloads: true,
        span_payloads: false,
    };
    let mut inv = start(&reg, "o.x", Payload::Host, opts);
    let mut records = Vec::new();
    let (o, steps) = drive_sync(&mut inv, |s| match s {
        Step::ExportOutput => Answer::OutputExported(json!({"redacted": true})),
        Step::Audit(r) => {
            records.push((*r).clone());
            Answer::Audited
        }
        other => permissive(other),
    });
    assert_eq!(o, Outcome::Ok(Payload::Host));
    assert_eq!(
        steps,
        [
            StepKind::Audit,
            StepKind::RunHandler,
            StepKind::RedactOutput,
            StepKind::ExportOutput,
            StepKind::Audit
        ]
    );
    assert_eq!(records[1].output, Some(json!({"redacted": true})));
}

/// Spans opted into payloads get the redacted output in `span_output`,
/// never in `output` (what an audit subscriber or sink sees), and the other
/// way round; both together get both.
#[test]
fn span_payloads_and_audit_payloads_are_separate_opt_ins() {
    let m = with(meta(&["mcp"]), json!({"redact": {"output": true}}));
    let reg = registry(json!([{"id": "o.x", "meta": m}]), Value::Null);
    for (audit_payloads, span_payloads) in
        [(false, true), (true, false), (true, true), (false, false)]
    {
        let opts = InvokeOptions {
            now_ms: 0,
            audit: true,
            audit_payloads,
            span_payloads,
        };
        let mut inv = start(&reg, "o.x", Payload::Host, opts);
        let mut finished = None;
        let (o, _) = drive_sync(&mut inv, |s| match s {
            Step::ExportOutput => Answer::OutputExported(json!({"redacted": true})),
            Step::Audit(r) => {
                if r.event == AuditEvent::Finished {
                    finished = Some((*r).clone());
                }
                Answer::Audited
            }
            other => permissive(other),
        });
        assert_eq!(o, Outcome::Ok(Payload::Host));
        let r = finished.unwrap();
        let redacted = Some(json!({"redacted": true}));
        assert_eq!(
            r.output,
            if audit_payloads {
                redacted.clone()
            } else {
                None
            }
        );
        assert_eq!(r.span_output, if span_payloads { redacted } else { None });
        assert!(
            !r.to_json().to_string().contains("redacted") || audit_payloads,
            "the span's copy is never serialized"
        );
    }
}

#[test]
fn the_hot_path_asks_only_for_the_handler() {
    let reg = registry(json!([{"id": "f.x", "meta": meta(&["mcp"])}]), Value::Null);
    let mut inv = start(&reg, "f.x", Payload::Host, InvokeOptions::at(0));
    let (o, steps) = drive_sync(&mut inv, permissive);
    assert_eq!(o, Outcome::Ok(Payload::Host));
    assert_eq!(steps, [StepKind::RunHandler]);
    let _ = audited(0);
}

#[tokio::test]
async fn driver_futures_are_send_so_hosts_can_spawn_them() {
    fn assert_send<T: Send>(_: &T) {}
    let reg = registry(json!([{"id": "f.x", "meta": meta(&["mcp"])}]), Value::Null);
    let d = builder(&reg)
        .handler("f.x", Fixture::new(Behaviour::Echo))
        .build()
        .unwrap();
    let fut = d.invoke("f.x", json!({}), Call::new(Frame::new(Surface::Mcp)));
    assert_send(&fut);
    assert!(matches!(fut.await, Outcome::Ok(_)));
    let fut = d.resume("apr_x", Call::new(Frame::new(Surface::Mcp)));
    assert_send(&fut);
    fut.await;
}

#[test]
fn the_driver_refuses_missing_hooks_at_build() {
    let m = with(
        meta(&["mcp"]),
        json!({"redact": {"output": true}, "policies": [{"host": true}]}),
    );
    let reg = registry(
        json!([{"id": "f.x", "meta": m, "validateInput": true}]),
        json!({"policies": [{"host": true}]}),
    );
    let problems = builder(&reg).build().err().unwrap();
    assert_eq!(problems.len(), 5, "{problems:?}");
}

#[test]
fn start_by_index_applies_the_same_exposure_rule() {
    let reg = registry(
        json!([{"id": "i.a", "meta": meta(&["mcp"])}, {"id": "i.b", "meta": meta(&["direct"])}]),
        Value::Null,
    );
    let run = |index: u32| {
        let mut inv = Invocation::start_index(
            Arc::clone(&reg),
            index,
            Payload::Host,
            Frame::new(Surface::Mcp),
            InvokeOptions::at(0),
        );
        drive_sync(&mut inv, permissive).0
    };
    assert_eq!(run(0), Outcome::Ok(Payload::Host));
    let unexposed = run(1);
    assert_eq!(error_of(&unexposed).code, ErrorCode::NotFound);
    assert_eq!(unexposed, run(7), "unexposed and unknown index look alike");
}

#[test]
fn a_frame_past_its_limits_consumes_nothing_on_resume_and_its_attributes_are_measured_as_json() {
    use orpc_agent_core::frame::{MAX_ACTOR_ATTRIBUTES_BYTES, MAX_FRAME_ID_BYTES};
    let (reg, req) = pending_pay_send();
    // A resume whose frame names a request id past the limit: refused
    // before the store is asked (no consume step), INVALID_INPUT.
    let mut frame = Frame::new(Surface::Direct);
    frame.request_id = Some("r".repeat(MAX_FRAME_ID_BYTES + 1));
    let mut inv = Invocation::resume(Arc::clone(&reg), &req.id, frame, audited(10));
    let mut records = Vec::new();
    deliver_audits(&mut inv, &mut records);
    let (o, kinds) = drive_sync(&mut inv, permissive);
    assert!(kinds.is_empty(), "no step after the refusal: {kinds:?}");
    let e = error_of(&o);
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert_eq!(
        e.details,
        Some(json!({"reason": "FRAME_TOO_LARGE", "field": "requestId"}))
    );
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].request_id, None, "the record keeps none of it");
    // Attributes past their size as JSON: refused, and dropped from the record.
    let mut frame = Frame::new(Surface::Mcp);
    let mut big = Actor {
        id: Some("ann".into()),
        ..Actor::default()
    };
    big.attributes.insert(
        "notes".into(),
        Value::String("x".repeat(MAX_ACTOR_ATTRIBUTES_BYTES)),
    );
    frame.actor = big;
    let mut inv = Invocation::start(
        Arc::clone(&reg),
        "pay.send",
        Payload::Json(json!({"amount": 1})),
        frame,
        audited(10),
    );
    let mut records = Vec::new();
    deliver_audits(&mut inv, &mut records);
    let (o, _) = drive_sync(&mut inv, permissive);
    assert_eq!(
        error_of(&o).details,
        Some(json!({"reason": "FRAME_TOO_LARGE", "field": "actor.attributes"}))
    );
    assert_eq!(records[0].actor_id.as_deref(), Some("ann"));
}

#[test]
fn an_id_no_store_can_hold_is_not_found_before_any_store_and_is_not_recorded() {
    let (reg, _) = pending_pay_send();
    let mut missing = Invocation::resume(
        Arc::clone(&reg),
        "apr_0123456789abcdef0123456789abcdef",
        Frame::new(Surface::Mcp),
        audited(10),
    );
    assert_eq!(missing.step_kind(), StepKind::ConsumeApproval);
    missing
        .answer(Answer::Consumed(Err(
            orpc_agent_core::approval::ConsumeRefusal::NotFound.into(),
        )))
        .unwrap();
    let mut records = Vec::new();
    deliver_audits(&mut missing, &mut records);
    let (store_said, _) = drive_sync(&mut missing, permissive);
    // A client's id of any length: no store step, the same error.
    let long = format!("apr_{}", "x".repeat(100_000));
    let mut inv = Invocation::resume(
        Arc::clone(&reg),
        &long,
        Frame::new(Surface::Mcp),
        audited(10),
    );
    deliver_audits(&mut inv, &mut records);
    let (o, kinds) = drive_sync(&mut inv, permissive);
    assert!(kinds.is_empty(), "{kinds:?}");
    assert_eq!(error_of(&o), error_of(&store_said));
    assert_eq!(records.len(), 2);
    assert_eq!(
        records[1].approval_id, None,
        "the client's id is not recorded"
    );
    assert_eq!(records[1].stage, records[0].stage);
}
