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
        span_payloads: false,
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

/// Every crash input the fuzzers found, kept in fuzz/regressions/<target>/:
/// the decoders must answer each (value or typed error), never panic.
#[test]
fn recorded_crash_inputs_decode_or_fail_cleanly() {
    use orpc_agent_core::act::{DecodeOptions, MetaMap, MetaView, decode, diagnostic};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions");
    let mut replayed = 0;
    for target in std::fs::read_dir(&dir).unwrap() {
        for file in std::fs::read_dir(target.unwrap().path()).unwrap() {
            let bytes = std::fs::read(file.unwrap().path()).unwrap();
            let _ = decode(&bytes, DecodeOptions::LENIENT);
            let _ = decode(&bytes, DecodeOptions::default());
            let _ = MetaMap::decode(&bytes);
            let _ = MetaView::parse(&bytes);
            let _ = diagnostic(&bytes);
            replayed += 1;
        }
    }
    assert!(
        replayed > 0,
        "no regression inputs found in {}",
        dir.display()
    );
}

/// fuzz/cbor_meta (CI's fuzz-smoke, 2026-12-06): a value with no
/// deterministic form — a nested map whose keys collide once written
/// canonically — made the owned validator report INVALID_VALUE where the
/// borrowed one, reading the wire bytes, reported UNKNOWN_STD_KEY. Such a
/// value is now validated as plainly written: both report the same
/// problems at every position (`encode` still refuses the map).
#[test]
fn a_value_with_no_deterministic_form_is_judged_alike_by_both_validators() {
    use orpc_agent_core::act::{MetaMap, MetaView, Position, ValidateOptions};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions/cbor_meta/crash-9092465f71ed991f6224b174aff041ebc5f561b4");
    let bytes = std::fs::read(path).unwrap();
    let map = MetaMap::decode(&bytes).expect("well-formed");
    let view = MetaView::parse(&bytes).expect("well-formed");
    assert!(map.encode().is_err(), "no deterministic form");
    for position in Position::ALL {
        for strict in [false, true] {
            let opts = ValidateOptions { strict };
            let brief = |p: Vec<orpc_agent_core::act::Problem>| {
                p.into_iter()
                    .map(|p| (p.key, p.code, p.severity))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                brief(map.validate(position, opts)),
                brief(view.validate(position, opts)),
                "{position:?} strict {strict}"
            );
        }
    }
}

/// fuzz/cbor_roundtrip: a map with more than 16 keys of mixed types
/// (NaN floats among them) made the duplicate-key check sort with a
/// comparator that is not a total order, which panics in Rust ≥ 1.81. Keys
/// are now ordered by their deterministic encoding.
#[test]
fn a_large_map_with_nan_and_mixed_keys_decodes() {
    use orpc_agent_core::act::{DecodeOptions, decode};
    // Map of 40 entries: NaN, -0.0, 1.5, integers, text and arrays as keys.
    let mut bytes = vec![0xb8, 40];
    for i in 0u8..40 {
        match i % 5 {
            0 => bytes.extend_from_slice(&[0xfb, 0x7f, 0xf8, 0, 0, 0, 0, 0, i]), // NaN, payload i
            1 => bytes.extend_from_slice(&[0x18, i]),
            2 => bytes.extend_from_slice(&[0x61, b'a' + (i % 26)]),
            3 => bytes.extend_from_slice(&[0xfa, 0x3f, 0xc0, 0, i]),
            _ => bytes.extend_from_slice(&[0x81, i % 24]),
        }
        bytes.push(0xf6);
    }
    let v = decode(&bytes, DecodeOptions::LENIENT).expect("no duplicates: every key differs");
    assert_eq!(v.as_map().map(Vec::len), Some(40));
    // The same key twice among many is still found.
    let mut dup = vec![0xb8, 20];
    for i in 0u8..19 {
        dup.extend_from_slice(&[0x18, 100 + i, 0xf6]);
    }
    dup.extend_from_slice(&[0x18, 100, 0xf6]);
    assert_eq!(
        decode(&dup, DecodeOptions::LENIENT).unwrap_err().code(),
        "DUPLICATE_KEY"
    );
}
