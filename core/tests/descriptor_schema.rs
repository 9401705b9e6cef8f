#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Every descriptor's input schema is one a tool can have: a capability
//! without a schema, or with the empty schema (which constrains nothing, as
//! Python's `Any` gives it), lists the core's object schema, so no adapter
//! publishes a tool its clients refuse (the MCP SDKs reject an input schema
//! without `type`).

use orpc_agent_core::meta::Surface;
use orpc_agent_core::registry::{CapabilityDecl, CapabilityRegistry};
use serde_json::json;

#[test]
fn an_empty_or_missing_input_schema_is_the_default_object_schema() {
    let meta =
        json!({"description": "d", "expose": {"mcp": true}, "sideEffect": "read", "risk": "low"});
    let mut with_empty = CapabilityDecl::new("a.empty", meta.clone());
    with_empty.input_schema = Some(json!({}));
    let mut with_one = CapabilityDecl::new("a.typed", meta.clone());
    with_one.input_schema =
        Some(json!({"type": "object", "properties": {"q": {"type": "string"}}}));
    let without = CapabilityDecl::new("a.none", meta);
    let registry = CapabilityRegistry::build_with_json_options(
        vec![with_empty, with_one, without],
        &json!({}),
    )
    .unwrap();
    let schemas: Vec<_> = registry
        .descriptors(Surface::Mcp)
        .iter()
        .map(|d| (d.id.clone(), d.input_schema.clone().unwrap()))
        .collect();
    let object = json!({"type": "object", "properties": {}});
    assert_eq!(
        schemas,
        vec![
            ("a.empty".into(), object.clone()),
            (
                "a.typed".into(),
                json!({"type": "object", "properties": {"q": {"type": "string"}}})
            ),
            ("a.none".into(), object),
        ]
    );
}
