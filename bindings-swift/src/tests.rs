//! The FFI layer driven as Swift drives it, without Swift: step kinds,
//! answers, outcome reading, error mapping.
#![allow(clippy::unwrap_used, clippy::panic)]

use orpc_agent_core::ffi::answer_code as code;

use crate::{
    FfiError, FfiHostInput, FfiRegistry, input_hash_cbor, input_hash_host, input_hash_json,
    input_max_depth, max_hash_depth, step_kind_names,
};

fn json(text: &str) -> FfiHostInput {
    FfiHostInput::Json {
        text: text.into(),
        non_finite_at: None,
    }
}

const READ: &str = r#"[{"id":"notes.read","meta":{"description":"Read.","expose":{"mcp":true},"sideEffect":"read","risk":"low"},"validateInput":true},
 {"id":"notes.delete","meta":{"description":"Delete.","expose":{"mcp":true},"sideEffect":"destructive","risk":"high","approval":{"required":true}}}]"#;

fn registry() -> std::sync::Arc<FfiRegistry> {
    FfiRegistry::new(READ.into(), "{}".into(), "\"memory\"".into(), false, false).unwrap()
}

#[test]
fn a_call_is_one_crossing_per_host_step() {
    let reg = registry();
    let inv = reg
        .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(inv.step_kind(), 1, "ValidateInput");
    assert_eq!(inv.answer(code::INPUT_VALID, false, 1_000), 6, "RunHandler");
    assert_eq!(inv.deadline_at_ms(), 31_000);
    assert_eq!(inv.attempt(), 1);
    // Done, ok, the output held by Swift: the sentinel, so no outcome
    // needs reading (`ffi::reported_kind`); the outcome still says so.
    assert_eq!(
        inv.answer(code::HANDLER_OK, false, 1_005),
        orpc_agent_core::ffi::sentinel::DONE_OK_HOST,
        "DoneOkHost"
    );
    assert_eq!(inv.outcome_kind(), 0, "ok, output held by Swift");
}

#[test]
fn approvals_run_inside_the_synchronous_calls() {
    let reg = registry();
    let inv = reg
        .start(1, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(inv.step_kind(), 3, "the hash needs the input");
    assert_eq!(inv.answer_input_exported(json("{\"id\":7}"), 1_000), 13);
    assert_eq!(inv.outcome_kind(), 2);
    let request = inv.outcome_approval().unwrap();
    // As stored (the status the core gave it), as Node and Python show it.
    assert_eq!(request.status, "pending");
    let json: serde_json::Value = serde_json::from_str(&request.json).unwrap();
    assert_eq!(json["status"], "pending");
    assert!(
        json.get("inputHash").is_none(),
        "the hash never leaves the store"
    );
    let id = request.id;
    reg.decide(id.clone(), true, Some("boss".into()), None, 2_000)
        .unwrap();
    let resumed = reg
        .resume(id, 0, None, 3_000, crate::FfiResumeLimit::Trusted, false)
        .unwrap();
    assert_eq!(
        resumed.step_kind(),
        6,
        "consumed in the call; run the handler"
    );
    assert_eq!(resumed.input_json().as_deref(), Some("{\"id\":7}"));
    assert_eq!(resumed.frame().surface, crate::FfiSurface::Mcp);
}

/// Frame details naming the actor `id` (or an anonymous actor).
fn caller(id: Option<&str>) -> Option<crate::FfiFrameDetails> {
    Some(crate::FfiFrameDetails {
        actor: crate::FfiActor {
            id: id.map(str::to_owned),
            roles: vec![],
            attributes_json: "{}".into(),
        },
        attributes_non_finite_at: None,
        trace: None,
        request_id: None,
        agent_id: None,
        session_id: None,
    })
}

/// A pending-then-approved request for `notes.delete` made on MCP by
/// `ann`; its id.
fn approved_request(reg: &FfiRegistry) -> String {
    let inv = reg
        .start(
            1,
            2,
            caller(Some("ann")),
            FfiHostInput::Opaque,
            1_000,
            false,
        )
        .unwrap();
    assert_eq!(inv.answer_input_exported(json("{\"id\":7}"), 1_000), 13);
    let id = inv.outcome_approval().unwrap().id;
    reg.decide(id.clone(), true, Some("boss".into()), None, 2_000)
        .unwrap();
    id
}

#[test]
fn limited_resumes_are_the_cores_and_consume_nothing_when_refused() {
    use crate::FfiResumeLimit::{Requester, ThroughTool};
    let reg = registry();
    let id = approved_request(&reg);
    let tool = |name: &str| ThroughTool {
        id_or_tool_name: name.into(),
    };
    for (surface, frame, limit) in [
        (2, caller(Some("bob")), Requester),
        (2, caller(None), Requester),
        (0, caller(Some("ann")), Requester),
        (2, caller(Some("ann")), tool("notes.read")),
        (2, caller(Some("ann")), tool("no.such.tool")),
    ] {
        let refused = reg
            .resume(id.clone(), surface, frame, 3_000, limit, false)
            .unwrap();
        assert_eq!(refused.step_kind(), 13);
        assert_eq!(refused.outcome_error().unwrap().code, "APPROVAL_NOT_FOUND");
    }
    let ran = reg
        .resume(
            id.clone(),
            2,
            caller(Some("ann")),
            3_000,
            tool("notes.delete"),
            false,
        )
        .unwrap();
    assert_eq!(
        ran.step_kind(),
        6,
        "the requester, through its tool: consumed now"
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
        reg.start(0, 9, None, FfiHostInput::Opaque, 1, false),
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
    let inv = reg
        .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(inv.answer(code::SLEPT, false, 1_000), 13);
    assert_eq!(inv.outcome_kind(), 3);
    assert_eq!(inv.outcome_error().unwrap().code, "INTERNAL");
}

fn error_of(inv: &crate::FfiInvocation) -> (String, String, Option<serde_json::Value>) {
    assert_eq!(inv.outcome_kind(), 3);
    let e = inv.outcome_error().unwrap();
    let details = e
        .details_json
        .map(|d| serde_json::from_str::<serde_json::Value>(&d).unwrap());
    (e.code, e.message, details)
}

#[test]
fn the_start_verdict_is_the_cores() {
    let reg = registry();
    // Too deep as text: the core's limits.
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    let inv = reg.start(0, 2, None, json(&deep), 1_000, false).unwrap();
    assert_eq!(inv.step_kind(), 13);
    let (code, _, details) = error_of(&inv);
    assert_eq!(code, "LIMIT_EXCEEDED");
    assert_eq!(
        details.unwrap(),
        serde_json::json!({"limit": "depth", "max": 64})
    );
    // A walk Swift stopped past the core's depth: the core's meter.
    let depth = input_max_depth() + 1;
    let inv = reg
        .start(
            0,
            2,
            None,
            FfiHostInput::Deeper {
                depth,
                path: "/v".into(),
            },
            1_000,
            false,
        )
        .unwrap();
    let (code, _, details) = error_of(&inv);
    assert_eq!(code, "LIMIT_EXCEEDED");
    assert_eq!(details.unwrap()["limit"], "depth");
    // Not past it: unmeasured, the call goes on.
    let inv = reg
        .start(
            0,
            2,
            None,
            FfiHostInput::Deeper {
                depth: 3,
                path: "/".into(),
            },
            1_000,
            false,
        )
        .unwrap();
    assert_eq!(inv.step_kind(), 1);
    // A non-finite number: the hash's NON_FINITE_NUMBER, after the limits.
    let nan = FfiHostInput::Json {
        text: r#"{"amount":null}"#.into(),
        non_finite_at: Some("/amount".into()),
    };
    let inv = reg.start(0, 2, None, nan, 1_000, false).unwrap();
    let (code, message, details) = error_of(&inv);
    assert_eq!(code, "INVALID_INPUT");
    assert!(message.contains("/amount"), "{message}");
    assert_eq!(details.unwrap()["reason"], "NON_FINITE_NUMBER");
    let both = FfiHostInput::Json {
        text: deep.clone(),
        non_finite_at: Some("/0".into()),
    };
    let inv = reg.start(0, 2, None, both, 1_000, false).unwrap();
    assert_eq!(error_of(&inv).0, "LIMIT_EXCEEDED", "limits first");
    // Exposure still comes first (SI-8).
    let hidden = reg.start(0, 0, None, json(&deep), 1_000, false).unwrap();
    assert_eq!(error_of(&hidden).0, "NOT_FOUND");
}

#[test]
fn an_input_with_no_json_form_ends_the_call_in_the_core() {
    let reg = registry();
    for answer in [
        |inv: &crate::FfiInvocation| inv.answer(code::INPUT_NOT_EXPORTABLE, false, 1_000),
        |inv: &crate::FfiInvocation| {
            inv.answer_input_exported(
                FfiHostInput::Json {
                    text: "{\"a\":null}".into(),
                    non_finite_at: Some("/a".into()),
                },
                1_000,
            )
        },
        |inv: &crate::FfiInvocation| inv.answer_input_exported(json(&"[".repeat(200)), 1_000),
        |inv: &crate::FfiInvocation| {
            inv.answer_input_exported(
                FfiHostInput::Deeper {
                    depth: 300,
                    path: "/0".into(),
                },
                1_000,
            )
        },
        |inv: &crate::FfiInvocation| inv.answer_input_exported(FfiHostInput::Opaque, 1_000),
    ] {
        let inv = reg
            .start(1, 2, None, FfiHostInput::Opaque, 1_000, false)
            .unwrap();
        assert_eq!(inv.step_kind(), 3, "ExportInput");
        assert_eq!(answer(&inv), 13);
        let (code, message, _) = error_of(&inv);
        assert_eq!(code, "INVALID_INPUT");
        assert!(
            message.starts_with("The input cannot be bound"),
            "{message}"
        );
    }
}

#[test]
fn a_validator_failure_is_generic_and_an_abandoned_step_is_internal() {
    let reg = registry();
    let inv = reg
        .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(inv.answer(code::INPUT_VALIDATOR_FAILED, false, 1_000), 13);
    let (code, message, _) = error_of(&inv);
    assert_eq!(code, "INVALID_INPUT");
    assert_eq!(message, orpc_agent_core::pipeline::issues::VALIDATOR_FAILED);
    for at_handler in [false, true] {
        let inv = reg
            .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
            .unwrap();
        if at_handler {
            assert_eq!(inv.answer(code::INPUT_VALID, false, 1_000), 6);
        }
        assert_eq!(inv.abandon(1_000), 13);
        let (code, message, _) = error_of(&inv);
        assert_eq!(code, "INTERNAL");
        assert_eq!(
            message,
            orpc_agent_core::pipeline::machine::ABANDONED_MESSAGE
        );
    }
}

#[test]
fn an_output_with_no_json_form_is_audited_as_null() {
    let reg = FfiRegistry::new(READ.into(), "{}".into(), "\"memory\"".into(), true, true).unwrap();
    let inv = reg
        .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(
        inv.answer(code::INPUT_VALID, false, 1_000),
        12,
        "started record"
    );
    assert_eq!(inv.answer(code::AUDITED, false, 1_000), 6);
    assert_eq!(
        inv.answer(code::HANDLER_OK, false, 1_001),
        11,
        "ExportOutput"
    );
    assert_eq!(
        inv.answer_text(code::OUTPUT_EXPORTED, Some("[".repeat(300)), 1_001),
        12
    );
    let record = inv.audit_record().unwrap();
    assert_eq!(record.outcome.as_deref(), Some("ok"));
    assert_eq!(record.output_json.as_deref(), Some("null"));
    let json: serde_json::Value = serde_json::from_str(&record.json).unwrap();
    assert_eq!(json["output"], serde_json::Value::Null);
}

#[test]
fn the_hash_of_a_host_value_refuses_what_json_cannot_hold() {
    let reason = |r: Result<String, FfiError>| match r {
        Err(FfiError::Capability {
            code, details_json, ..
        }) => {
            assert_eq!(code, "INVALID_INPUT");
            serde_json::from_str::<serde_json::Value>(&details_json.unwrap()).unwrap()["reason"]
                .as_str()
                .unwrap()
                .to_owned()
        }
        other => panic!("{other:?}"),
    };
    let nan = FfiHostInput::Json {
        text: "[null]".into(),
        non_finite_at: Some("/0".into()),
    };
    assert_eq!(
        reason(input_hash_host("a".into(), nan)),
        "NON_FINITE_NUMBER"
    );
    let deep = FfiHostInput::Deeper {
        depth: max_hash_depth() + 1,
        path: "/0".into(),
    };
    assert_eq!(reason(input_hash_host("a".into(), deep)), "TOO_DEEP");
    // The core's words and sub-code, as Node's and Python's refusals.
    assert_eq!(
        reason(input_hash_host("a".into(), FfiHostInput::Opaque)),
        "NOT_JSON_VALUE"
    );
    assert_eq!(
        input_hash_host("a".into(), json("{\"id\":1}")).unwrap(),
        input_hash_json("a".into(), "{\"id\":1}".into()).unwrap()
    );
}

#[test]
fn step_kind_names_are_the_cores_in_numeric_order() {
    let names = step_kind_names();
    assert_eq!(names.len(), orpc_agent_core::StepKind::ALL.len());
    assert_eq!(names[0], "ValidateInput");
    assert_eq!(names[12], "Done");
}

#[test]
fn every_answer_carries_the_time_and_a_spent_deadline_starts_no_handler() {
    let reg = registry();
    // In time (the deadline is 31 000): the handler's step.
    let inv = reg
        .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(
        inv.answer(code::INPUT_VALID, false, 30_999),
        6,
        "RunHandler"
    );
    // The validator answered at the deadline: TIMEOUT, no handler step.
    let inv = reg
        .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(inv.answer(code::INPUT_VALID, false, 31_000), 13, "Done");
    assert_eq!(error_of(&inv).0, "TIMEOUT");
}

#[test]
fn a_hook_still_running_at_the_calls_deadline_is_timeout() {
    let reg = registry();
    let inv = reg
        .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(inv.step_kind(), 1, "ValidateInput");
    assert_eq!(inv.call_deadline_ms(), 31_000);
    assert_eq!(inv.answer(code::DEADLINE_PASSED, false, 31_000), 13, "Done");
    assert_eq!(error_of(&inv).0, "TIMEOUT");
    // Not at a hook's step: out of turn, INTERNAL.
    let inv = reg
        .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(inv.answer(code::INPUT_VALID, false, 1_000), 6, "RunHandler");
    assert_eq!(inv.answer(code::DEADLINE_PASSED, false, 31_000), 13);
    assert_eq!(error_of(&inv).0, "INTERNAL");
}

#[test]
fn an_approval_requests_typed_fields_say_what_its_json_says() {
    let reg = registry();
    let id = approved_request(&reg);
    let r = reg.approval(id, 2_500).unwrap().unwrap();
    let json: serde_json::Value = serde_json::from_str(&r.json).unwrap();
    let input: serde_json::Value = serde_json::from_str(&r.input_json).unwrap();
    assert_eq!(json["id"], r.id.as_str());
    assert_eq!(json["capabilityId"], r.capability_id.as_str());
    assert_eq!(json["input"], input);
    assert_eq!(json["surface"], "mcp");
    assert_eq!(r.surface, crate::FfiSurface::Mcp);
    assert_eq!(json["actor"]["id"], "ann");
    assert_eq!(r.actor.id.as_deref(), Some("ann"));
    assert_eq!(json["createdAt"], r.created_at_ms);
    assert_eq!(json["expiresAt"], r.expires_at_ms);
    assert_eq!(json["status"], r.status.as_str());
    assert_eq!(r.status, "approved");
    assert_eq!(json["decidedBy"], "boss");
    assert_eq!(r.decided_by.as_deref(), Some("boss"));
    assert_eq!(json["decidedAt"], r.decided_at_ms.unwrap());
    // As of a later instant, past its expiry: expired, in both.
    let later = reg
        .approval(r.id.clone(), r.expires_at_ms)
        .unwrap()
        .unwrap();
    assert_eq!(later.status, "expired");
    let later_json: serde_json::Value = serde_json::from_str(&later.json).unwrap();
    assert_eq!(later_json["status"], "expired");
}

#[test]
fn an_answer_code_the_core_does_not_know_ends_the_call_internal() {
    let r = registry();
    let inv = r
        .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(inv.step_kind(), 1, "ValidateInput");
    assert_eq!(inv.answer(250, false, 1_000), 13, "Done");
    assert_eq!(inv.outcome_error().unwrap().code, "INTERNAL");
    // A code that needs a text, without one, is no answer either.
    let inv = r
        .start(0, 2, None, FfiHostInput::Opaque, 1_000, false)
        .unwrap();
    assert_eq!(
        inv.answer_text(code::INPUT_INVALID, None, 1_000),
        13,
        "Done"
    );
    assert_eq!(inv.outcome_error().unwrap().code, "INTERNAL");
}

#[test]
fn a_frame_whose_attributes_held_a_non_finite_number_is_refused_before_the_call() {
    let reg = registry();
    let mut details = caller(Some("ann")).unwrap();
    details.actor.attributes_json = r#"{"score":null}"#.into();
    details.attributes_non_finite_at = Some("/score".into());
    let Err(FfiError::Capability { code, message, .. }) =
        reg.start(0, 0, Some(details), FfiHostInput::Opaque, 1_000, false)
    else {
        panic!("not refused as a capability error")
    };
    assert_eq!(code, "INVALID_INPUT");
    assert_eq!(
        message,
        "input at /attributes/score is NaN or infinite; only finite numbers can be hashed"
    );
}
