//! The FFI layer driven as Swift drives it, without Swift: step kinds,
//! answers, outcome reading, error mapping.
#![allow(clippy::unwrap_used, clippy::panic)]

use crate::{FfiError, FfiRegistry, input_hash_cbor, input_hash_json};

const READ: &str = r#"[{"id":"notes.read","meta":{"description":"Read.","expose":{"mcp":true},"sideEffect":"read","risk":"low"},"validateInput":true},
 {"id":"notes.delete","meta":{"description":"Delete.","expose":{"mcp":true},"sideEffect":"destructive","risk":"high","approval":{"required":true}}}]"#;

fn registry() -> std::sync::Arc<FfiRegistry> {
    FfiRegistry::new(READ.into(), "{}".into(), "\"memory\"".into(), false, false).unwrap()
}

#[test]
fn a_call_is_one_crossing_per_host_step() {
    let reg = registry();
    let inv = reg.start(0, 2, None, None, 1_000).unwrap();
    assert_eq!(inv.step_kind(), 1, "ValidateInput");
    assert_eq!(inv.answer_input_valid(None).unwrap(), 6, "RunHandler");
    assert_eq!(inv.deadline_at_ms(), 31_000);
    assert_eq!(inv.attempt(), 1);
    assert_eq!(inv.answer_handler_ok(1_005), 13, "Done");
    assert_eq!(inv.outcome_kind(), 0, "ok, output held by Swift");
}

#[test]
fn approvals_run_inside_the_synchronous_calls() {
    let reg = registry();
    let inv = reg.start(1, 2, None, None, 1_000).unwrap();
    assert_eq!(inv.step_kind(), 3, "the hash needs the input");
    assert_eq!(inv.answer_input_exported("{\"id\":7}".into()).unwrap(), 13);
    assert_eq!(inv.outcome_kind(), 2);
    let request = inv.outcome_approval_json().unwrap().unwrap();
    let id = serde_json::from_str::<serde_json::Value>(&request).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    reg.decide(id.clone(), true, Some("boss".into()), None, 2_000)
        .unwrap();
    let resumed = reg.resume(id, 0, None, 3_000).unwrap();
    assert_eq!(
        resumed.step_kind(),
        6,
        "consumed in the call; run the handler"
    );
    assert_eq!(resumed.input_json().as_deref(), Some("{\"id\":7}"));
    assert!(
        resumed
            .frame_json()
            .unwrap()
            .contains("\"surface\":\"mcp\"")
    );
}

#[test]
fn bad_arguments_are_typed_errors() {
    match FfiRegistry::new(
        r#"[{"id":"a","meta":{}}]"#.into(),
        "{}".into(),
        "\"memory\"".into(),
        false,
        false,
    ) {
        Err(FfiError::Registry { problems_json, .. }) => {
            assert_eq!(
                serde_json::from_str::<serde_json::Value>(&problems_json)
                    .unwrap()
                    .as_array()
                    .unwrap()
                    .len(),
                4
            )
        }
        _ => panic!("expected the aggregate error"),
    }
    let reg = registry();
    assert!(matches!(
        reg.start(0, 9, None, None, 1),
        Err(FfiError::Capability { code, .. }) if code == "INVALID_INPUT"
    ));
    assert!(matches!(
        FfiRegistry::new("[]".into(), "{}".into(), r#"{"postgres":"postgres://x"}"#.into(), false, false),
        Err(FfiError::Capability { code, .. }) if code == "INVALID_INPUT"
    ));
    assert!(input_hash_json("a".into(), "{".into()).is_err());
    assert!(matches!(
        input_hash_cbor("a".into(), vec![0xf9, 0x7e, 0x00]),
        Err(FfiError::Capability { code, .. }) if code == "INVALID_INPUT"
    ));
}

#[test]
fn an_out_of_turn_answer_ends_in_internal() {
    let reg = registry();
    let inv = reg.start(0, 2, None, None, 1_000).unwrap();
    assert_eq!(inv.answer_slept(1_000), 13);
    assert_eq!(inv.outcome_kind(), 3);
    assert_eq!(inv.outcome_error().unwrap().code, "INTERNAL");
}
