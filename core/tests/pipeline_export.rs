//! `Answer::InputNotExportable`: a host whose validated input has no JSON
//! form (NaN, a cycle) fails the call with INVALID_INPUT at the export,
//! never binding an approval to a lossy copy of the input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use orpc_agent_core::{
    Answer, CapabilityDecl, CapabilityRegistry, ErrorCode, Frame, Invocation, InvokeOptions,
    Outcome, Payload, RegistryOptions, StepKind, Surface,
};
use serde_json::json;

#[test]
fn an_input_without_json_form_fails_invalid_input() {
    let meta = json!({"description": "Send money.", "expose": {"mcp": true},
        "sideEffect": "external", "risk": "high", "approval": {"required": true}});
    let reg = Arc::new(
        CapabilityRegistry::build(
            vec![CapabilityDecl::new("pay.send", meta)],
            RegistryOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}")),
    );
    let mut inv = Invocation::start(
        reg,
        "pay.send",
        Payload::Host,
        Frame::new(Surface::Mcp),
        InvokeOptions::at(0),
    );
    inv.answer(Answer::InputValid(Payload::Host))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(inv.step_kind(), StepKind::ExportInput);
    inv.answer(Answer::InputNotExportable("NaN at /amount".into()))
        .unwrap_or_else(|e| panic!("{e}"));
    match inv.take_outcome() {
        Some(Outcome::Error(e)) => assert_eq!(e.code, ErrorCode::InvalidInput),
        other => panic!("expected INVALID_INPUT, got {other:?}"),
    }
}
