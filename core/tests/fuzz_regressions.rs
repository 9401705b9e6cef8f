#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Regression tests for what the fuzz targets in `fuzz/` found (issue 10;
//! docs/fuzzing.md lists each finding). Each test replays the minimal
//! input the fuzzer reported, through the public API.

use std::sync::Arc;

use orpc_agent_core::pipeline::{Answer, InvokeOptions, Outcome, Payload};
use orpc_agent_core::{CapabilityDecl, CapabilityRegistry, ErrorCode, Frame, Invocation, Surface};
use serde_json::json;

fn registry() -> Arc<CapabilityRegistry> {
    let meta = json!({"description": "Write.", "expose": {"mcp": true},
        "sideEffect": "write", "risk": "medium", "timeoutMs": 100});
    let mut decl = CapabilityDecl::new("orders.cancel", meta);
    decl.validate_input = false;
    decl.validate_output = false;
    Arc::new(CapabilityRegistry::build(vec![decl], Default::default()).unwrap())
}

/// fuzz/pipeline_answers: a host that answered once more after the
/// invocation finished replaced its outcome (here a handler's `Ok`, so the
/// write had run) with INTERNAL — a caller seeing INTERNAL may retry and
/// run the write twice. A finished invocation now keeps its outcome and
/// refuses the answer.
#[test]
fn an_answer_after_done_keeps_the_outcome() {
    let opts = InvokeOptions {
        now_ms: 1_000,
        audit: true,
        audit_payloads: false,
    };
    let mut inv = Invocation::start(
        registry(),
        "orders.cancel",
        Payload::Json(json!({})),
        Frame::new(Surface::Mcp),
        opts,
    );
    inv.answer(Answer::Audited).unwrap(); // started
    inv.answer(Answer::HandlerOk {
        output: Payload::Json(json!({"ok": true})),
        now_ms: 1_010,
    })
    .unwrap();
    inv.answer(Answer::Audited).unwrap(); // finished
    assert!(inv.is_done());
    for stray in [
        Answer::Audited,
        Answer::HandlerTimedOut { now_ms: 2_000 },
        Answer::RedactorFailed,
    ] {
        let e = inv.answer(stray).unwrap_err();
        assert_eq!(e.code, ErrorCode::Internal);
    }
    assert_eq!(
        inv.take_outcome(),
        Some(Outcome::Ok(Payload::Json(json!({"ok": true}))))
    );
    // Taken once: a stray answer does not make another outcome appear.
    assert!(inv.answer(Answer::Audited).is_err());
    assert_eq!(inv.take_outcome(), None);
}

/// Same rule when the outcome is an error: a timeout stays a timeout.
#[test]
fn an_answer_after_done_keeps_an_error_outcome() {
    let mut inv = Invocation::start(
        registry(),
        "orders.cancel",
        Payload::Json(json!({})),
        Frame::new(Surface::Mcp),
        InvokeOptions::at(1_000),
    );
    inv.answer(Answer::HandlerTimedOut { now_ms: 1_100 })
        .unwrap();
    assert!(inv.answer(Answer::Audited).is_err());
    match inv.take_outcome() {
        Some(Outcome::Error(e)) => assert_eq!(e.code, ErrorCode::Timeout),
        other => panic!("{other:?}"),
    }
}
