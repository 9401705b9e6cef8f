#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Descriptors as CBOR, component metadata through manifests and wasm
//! sections, capability decisions — through the public API.

use orpc_agent_core::Descriptor;
use orpc_agent_core::act::capabilities::{Decision, Grant, Request, decide};
use orpc_agent_core::act::component::ComponentMeta;
use orpc_agent_core::act::tool_meta::{ToolHints, descriptor_from_cbor, descriptor_to_cbor};
use orpc_agent_core::act::wasm::{self, custom_section, read_component_section};
use orpc_agent_core::act::{MetaMap, Position, ValidateOptions};

fn descriptor() -> Descriptor {
    Descriptor::from_json(
        r#"{
        "id": "orders.refund",
        "toolNames": {"aiSdk": "orders_refund", "mcp": "orders_refund"},
        "description": "Refund an order",
        "inputSchema": {"type": "object", "properties": {"amount": {"type": "number", "maximum": 1000.5}}},
        "sideEffect": "destructive",
        "risk": "high",
        "tags": ["billing"],
        "idempotent": true,
        "timeoutMs": 5000,
        "approval": {"required": true, "type": "manager", "expiresInMs": 900000},
        "discovery": "discoverable",
        "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false}
    }"#,
    )
    .unwrap()
}

#[test]
fn descriptor_travels_as_cbor() {
    let d = descriptor();
    let bytes = descriptor_to_cbor(&d).unwrap();
    assert_eq!(descriptor_from_cbor(&bytes).unwrap(), d);
    // The embedded std: map is valid tool-definition metadata with the hints.
    let m = MetaMap::decode(&bytes).unwrap();
    let meta = MetaMap::from_value(m.get("metadata").unwrap()).unwrap();
    assert!(
        meta.validate(Position::ToolDefinition, ValidateOptions { strict: true })
            .is_empty()
    );
    let hints = ToolHints::from_meta_map(&meta).unwrap();
    assert_eq!(hints.destructive, Some(true));
    assert_eq!(hints.read_only, Some(false));
    assert_eq!(hints.timeout_ms, Some(5000));
    assert_eq!(hints.tags, ["billing"]);
    assert_eq!(hints.mcp_annotations()["destructiveHint"], true);
    // Metadata that contradicts the fields is refused.
    let mut tampered = m.clone();
    let mut bad = meta.clone();
    bad.insert("std:read-only", ciborium::Value::Bool(true));
    tampered.insert("metadata", bad.to_value());
    assert!(descriptor_from_cbor(&tampered.encode().unwrap()).is_err());
}

const MANIFEST: &str = r#"
[std]
name = "fs-tools"
version = "0.3.1"
description = "File tools"

[std.capabilities."wasi:filesystem"]
mount-root = "/data"
mounts = ["/data/in", "/data/out"]

[std.capabilities."act:credentials"]

[std.capabilities."acme:gpu/compute"]
description = { en = "GPU compute", de = "GPU-Rechenzeit" }
"#;

fn module() -> Vec<u8> {
    let mut m = b"\0asm\x01\0\0\0".to_vec();
    m.extend_from_slice(&[1, 4, 1, 0x60, 0, 0]);
    m.extend_from_slice(&custom_section("producers", b"\x00"));
    m.extend_from_slice(&[3, 2, 1, 0]); // function section
    m
}

#[test]
fn manifest_to_wasm_and_back_keeps_other_sections() {
    let c = ComponentMeta::from_manifest(MANIFEST, "act.toml").unwrap();
    let fs = c.capabilities.get("wasi:filesystem").unwrap();
    assert_eq!(fs.mount_root.as_deref(), Some("/data"));
    assert_eq!(fs.mounts, ["/data/in", "/data/out"]);
    let m = module();
    let embedded = c.embed(&m).unwrap();
    assert_eq!(
        &embedded[..m.len()],
        &m[..],
        "every other section byte for byte"
    );
    assert_eq!(ComponentMeta::from_wasm(&embedded).unwrap(), c);
    // Replacing keeps the rest and leaves exactly one section.
    let c2 = ComponentMeta::from_manifest(&MANIFEST.replace("0.3.1", "0.4.0"), "act.toml").unwrap();
    let replaced = c2.embed(&embedded).unwrap();
    assert_eq!(&replaced[..m.len()], &m[..]);
    assert_eq!(
        ComponentMeta::from_wasm(&replaced)
            .unwrap()
            .version
            .to_string(),
        "0.4.0"
    );
    let (_, secs) = wasm::sections(&replaced).unwrap();
    assert_eq!(secs.len(), 4);
    assert_eq!(
        read_component_section(&replaced).unwrap(),
        Some(&c2.to_cbor().unwrap()[..])
    );
}

#[test]
fn malformed_wasm_is_a_typed_error() {
    let code = |b: &[u8]| ComponentMeta::from_wasm(b).unwrap_err().code();
    assert_eq!(code(b"not wasm at all"), "WASM_BAD_MAGIC");
    assert_eq!(code(b"\0asm\x01\0"), "WASM_TRUNCATED");
    let mut t = module();
    t.extend_from_slice(&[0, 0x7f]); // a custom section claiming 127 bytes
    assert_eq!(code(&t), "WASM_TRUNCATED");
    let mut o = module();
    o.extend_from_slice(&[0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    assert_eq!(code(&o), "WASM_OVERLONG_LEB128");
    assert_eq!(code(&module()), "NO_SECTION");
    // A section holding garbage CBOR is a decode error, not a panic.
    let mut g = module();
    g.extend_from_slice(&custom_section("act:component", &[0xa1, 0x61]));
    assert_eq!(code(&g), "LENGTH_BEYOND_INPUT");
}

#[test]
fn grants_never_widen_declarations() {
    let c = ComponentMeta::from_manifest(
        "[std]\nname='db'\nversion='1.0.0'\n[std.capabilities.'db:drop']\ndescription='DROP'\n[[std.capabilities.'db:drop'.allow]]\nkey='test_*'\n[std.capabilities.'db:ddl']\n",
        "act.toml",
    )
    .unwrap();
    let req = |id: &str, key: &str| Request {
        id: id.into(),
        params: vec![("key".into(), ciborium::Value::Text(key.into()))],
    };
    let everything = Grant {
        id: "db:drop".into(),
        allow: Some(vec![vec![(
            "key".into(),
            ciborium::Value::Text("*".into()),
        )]]),
    };
    assert_eq!(
        decide(
            &c.capabilities,
            std::slice::from_ref(&everything),
            &req("db:drop", "test_1")
        ),
        Decision::Allowed
    );
    let Decision::Denied { reason, message } =
        decide(&c.capabilities, &[everything], &req("db:drop", "users"))
    else {
        panic!("widened")
    };
    assert_eq!(reason.code(), "OUTSIDE_DECLARATION");
    assert!(message.contains("db:drop"));
    let Decision::Denied { reason, .. } = decide(&c.capabilities, &[], &req("db:truncate", "x"))
    else {
        panic!()
    };
    assert_eq!(reason.code(), "UNDECLARED");
}
