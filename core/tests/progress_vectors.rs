#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! tests/vectors/progress (format: tests/vectors/README.md, section
//! `progress`) through the core's checker, the one every binding's
//! `progress()` reports to. The Rust driver's handlers report no progress,
//! so this runner is the checker itself; it also names why each dropped
//! report is dropped, which the bindings' `progress()` answers only as
//! `false`.

use orpc_agent_core::pipeline::progress::{ProgressChecker, ProgressError, ProgressEvent};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/progress/reports.json"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

/// The vectors' name for why a report is dropped.
fn reason(e: ProgressError) -> &'static str {
    match e {
        ProgressError::NotIncreasing { .. } => "not-increasing",
        ProgressError::AboveTotal { .. } => "above-total",
        ProgressError::TotalChanged { .. } => "total-changed",
        ProgressError::NotAnInteger => "not-an-integer",
        ProgressError::TooLarge { .. } => "too-large",
    }
}

#[test]
fn progress_vectors() {
    let cases = cases();
    assert!(!cases.is_empty());
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let mut checker = ProgressChecker::new();
        for (i, report) in case["reports"].as_array().unwrap().iter().enumerate() {
            let done = report["done"].as_u64().unwrap();
            let total = report.get("total").map(|t| t.as_u64().unwrap());
            let expect = &report["expect"];
            match (checker.report(done, total), expect.get("dropped")) {
                (Ok(ProgressEvent { done, total }), None) => {
                    assert_eq!(Some(done), expect["done"].as_u64(), "{name} #{i}");
                    assert_eq!(
                        total,
                        expect.get("total").and_then(Value::as_u64),
                        "{name} #{i}"
                    );
                }
                (Err(e), Some(why)) => assert_eq!(reason(e), why, "{name} #{i}"),
                (got, _) => panic!("{name} #{i}: expected {expect}, got {got:?}"),
            }
        }
    }
}
