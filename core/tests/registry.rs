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

/// Cedar (issue 21): the capability's input JSON Schema is the type of
/// `context.input`, so a policy is checked against the input it will see.
#[test]
fn cedar_policies_are_checked_against_the_capability_input_type() {
    let refund = |policy: &str| {
        let mut meta = meta();
        meta["policies"] = json!([{ "cedar": policy }]);
        let mut decl = CapabilityDecl::new("orders.refund", meta);
        decl.input_schema = Some(json!({
            "type": "object",
            "required": ["order", "cents"],
            "properties": {
                "order": {"type": "string"},
                "cents": {"type": "integer"},
                "ratio": {"type": "number"},
                "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}}
            },
            "$defs": {"line": {"type": "object", "required": ["sku"], "properties": {"sku": {"type": "string"}}}}
        }));
        CapabilityRegistry::build(vec![decl], RegistryOptions::default())
    };
    let problem = |policy: &str| {
        let err = refund(policy).expect_err(policy);
        assert_eq!(err.problems.len(), 1, "{policy}: {:?}", err.problems);
        let p = &err.problems[0];
        assert_eq!(p.code, ProblemCode::InvalidPolicy);
        assert_eq!(p.path, "policies[0].cedar");
        p.message.clone()
    };

    for good in [
        "permit (principal, action, resource) when { context.input.cents > 100000 };",
        "permit (principal, action, resource) when { context.input.order like \"o-*\" };",
        "forbid (principal, action, resource) when { context.input has lines && context.input.lines.contains({sku: \"x\"}) };",
    ] {
        assert!(refund(good).is_ok(), "{good}: {:?}", refund(good).err());
    }

    let m =
        problem("permit (principal, action, resource)\nwhen { context.input.cents > \"100\" };");
    assert!(m.starts_with("Cedar, line 2, column "), "{m}");
    assert!(m.contains("Long"), "{m}");
    // A number need not be an integer: Cedar has no type for it, so no
    // policy reads it, guarded or not (a guarded `forbid` would never deny).
    let m = problem("permit (principal, action, resource) when { context.input.ratio > 1 };");
    assert!(m.contains("ratio"), "{m}");
    let m = problem(
        "forbid (principal, action, resource) when { context.input has ratio && context.input.ratio > 1 };",
    );
    assert!(m.contains("impossible"), "{m}");
    let m = problem("permit (principal, action, resource) when { context.input.amount > 1 };");
    assert!(m.contains("amount"), "{m}");
}

/// A runtime Cedar policy applies to every capability, so it is checked
/// against each one's input; a problem is named once, by the first
/// capability it fails for.
#[test]
fn a_runtime_cedar_policy_is_checked_for_every_capability() {
    let with_input = |id: &str, schema: serde_json::Value| {
        let mut d = CapabilityDecl::new(id, meta());
        d.input_schema = Some(schema);
        d
    };
    let decls = || {
        vec![
            with_input(
                "a",
                json!({"type": "object", "required": ["cents"], "properties": {"cents": {"type": "integer"}}}),
            ),
            with_input(
                "b",
                json!({"type": "object", "properties": {"note": {"type": "string"}}}),
            ),
            with_input(
                "c",
                json!({"type": "object", "properties": {"note": {"type": "string"}}}),
            ),
        ]
    };
    let options = |policy: &str| json!({"policies": [{"cedar": policy}]});
    let err = CapabilityRegistry::build_with_json_options(
        decls(),
        &options("forbid (principal, action, resource) when { context.input.cents > 3 };"),
    )
    .unwrap_err();
    assert_eq!(err.problems.len(), 1, "{:?}", err.problems);
    assert!(
        err.problems[0]
            .message
            .starts_with("for capability `b`: Cedar, line 1, column ")
    );
    assert!(
        CapabilityRegistry::build_with_json_options(
            decls(),
            &options("forbid (principal, action, resource) when { context.input has cents && context.input.cents > 3 };"),
        )
        .is_ok()
    );
    assert!(
        CapabilityRegistry::build_with_json_options(
            decls(),
            &options("forbid (principal, action, resource == Capability::\"a\") when { context.input.cents > 3 };"),
        )
        .is_ok()
    );
}

/// A capability whose input is a string: testing it with `has` (which
/// fails at run time on a string) is refused at build; comparing it is not.
#[test]
fn a_string_input_is_a_cedar_string() {
    let build = |policy: &str| {
        let mut meta = meta();
        meta["policies"] = json!([{ "cedar": policy }]);
        let mut decl = CapabilityDecl::new("notes.add", meta);
        decl.input_schema = Some(json!({"type": "string", "maxLength": 100}));
        CapabilityRegistry::build(vec![decl], RegistryOptions::default())
    };
    assert!(
        build("forbid (principal, action, resource) when { context.input like \"*secret*\" };")
            .is_ok()
    );
    let err =
        build("forbid (principal, action, resource) when { context.input has x };").unwrap_err();
    assert_eq!(err.problems[0].code, ProblemCode::InvalidPolicy, "{err}");
}

/// What policies read is the validated input as the host exports it
/// (`validatedInputSchema`), which can differ from what callers send
/// (pydantic aliases, zod transforms and defaults): Cedar is checked, and
/// reads the input, through it.
#[test]
fn cedar_reads_the_validated_input_s_schema_when_the_host_gives_one() {
    let decl = |policy: &str, validated: serde_json::Value| {
        let mut meta = meta();
        meta["policies"] = json!([{ "cedar": policy }]);
        orpc_agent_core::ffi::decl_from_json(&json!({
            "id": "orders.get",
            "meta": meta,
            "inputSchema": {"type": "object", "required": ["orderId"], "properties": {"orderId": {"type": "string"}}},
            "validatedInputSchema": validated,
        }))
        .unwrap()
    };
    let by_name = json!({"type": "object", "required": ["order_id"], "properties": {"order_id": {"type": "string"}}});
    let reads = |field: &str| {
        format!("forbid (principal, action, resource) when {{ context.input.{field} == \"o-1\" }};")
    };
    let build = |d| CapabilityRegistry::build(vec![d], RegistryOptions::default());
    assert!(build(decl(&reads("order_id"), by_name.clone())).is_ok());
    assert!(build(decl(&reads("orderId"), by_name)).is_err());
    // `null`: the host cannot describe it, so only reads behind `has` check.
    assert!(build(decl(&reads("order_id"), serde_json::Value::Null)).is_err());
    let guarded = "forbid (principal, action, resource) when { context.input has order_id && context.input.order_id == \"o-1\" };";
    assert!(build(decl(guarded, serde_json::Value::Null)).is_ok());
}
