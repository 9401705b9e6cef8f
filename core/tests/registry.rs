//! Registry build and lookup through the public API (cases the JSON vectors
//! cannot express, such as a duplicate id).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use orpc_agent_core::{
    CapabilityDecl, CapabilityRegistry, ProblemCode, RegistryOptions, Surface, all_error_codes,
};
use serde_json::json;

fn meta() -> serde_json::Value {
    json!({"description": "d", "expose": {"mcp": true}, "sideEffect": "read", "risk": "low"})
}

#[test]
fn duplicate_ids_are_one_problem_each() {
    let err = CapabilityRegistry::build(
        vec![
            CapabilityDecl::new("a", meta()),
            CapabilityDecl::new("a", meta()),
            CapabilityDecl::new("b", json!({})),
        ],
        RegistryOptions::default(),
    )
    .unwrap_err();
    let codes: Vec<_> = err
        .problems
        .iter()
        .map(|p| (p.capability.as_deref(), p.code))
        .collect();
    assert!(codes.contains(&(Some("a"), ProblemCode::DuplicateId)));
    // b's four missing fields are reported in the same error.
    assert_eq!(codes.iter().filter(|c| c.0 == Some("b")).count(), 4);
    let text = err.to_string();
    assert!(
        text.starts_with("invalid capability metadata: 5 problems"),
        "{text}"
    );
}

#[test]
fn lookup_by_id_or_any_tool_name_and_exposure() {
    let reg = CapabilityRegistry::build(
        vec![CapabilityDecl::new(
            "orders.search",
            json!({"description": "d", "expose": {"mcp": true, "aiSdk": false}, "sideEffect": "read",
                   "risk": "low", "adapters": {"aiSdk": {"toolName": "searchOrders"}}}),
        )],
        RegistryOptions::default(),
    )
    .unwrap();
    for name in ["orders.search", "searchOrders", "orders_search"] {
        assert_eq!(reg.resolve(name).unwrap().id, "orders.search");
        assert!(reg.resolve_exposed(name, Surface::Mcp).is_some());
        // SI-8: not exposed looks exactly like missing.
        assert!(reg.resolve_exposed(name, Surface::AiSdk).is_none());
    }
    assert!(reg.resolve("orders").is_none());
    assert!(reg.resolve_exposed("nope", Surface::Mcp).is_none());
    assert_eq!(reg.descriptors(Surface::AiSdk).len(), 0);
    let d = &reg.descriptors(Surface::Mcp)[0];
    let text = serde_json::to_string(&d).unwrap();
    assert_eq!(orpc_agent_core::Descriptor::from_json(&text).unwrap(), *d);
    assert_eq!(d.to_json()["toolNames"]["aiSdk"], "searchOrders");
    assert_eq!(d.to_json()["approval"]["expiresInMs"], 900_000);
}

#[test]
fn error_codes_are_listed_for_drift_tests() {
    let codes = all_error_codes();
    assert_eq!(codes.len(), 18);
    for c in [
        "NOT_FOUND",
        "INVALID_INPUT",
        "POLICY_DENIED",
        "APPROVAL_EXPIRED",
        "TIMEOUT",
        "CANCELLED",
        "EXECUTION_FAILED",
        "OUTPUT_INVALID",
        "INTERNAL",
    ] {
        assert!(codes.contains(&c), "{c}");
    }
}

#[test]
fn descriptor_json_rejects_garbage_with_an_error() {
    for text in [
        "",
        "{}",
        "[]",
        "{\"id\": 3}",
        "{\"sideEffect\": \"teleport\"}",
    ] {
        assert!(
            orpc_agent_core::Descriptor::from_json(text).is_err(),
            "{text}"
        );
    }
}
