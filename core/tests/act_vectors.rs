#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! tests/vectors/act/*.json: metadata validation per position, hostile
//! CBOR, trace context and localized strings. CBOR made by cbor2,
//! expectations written from spec/004 (tests/cross/gen_act_vectors.py).

use std::collections::BTreeSet;
use std::path::PathBuf;

use orpc_agent_core::act::localized::Localized;
use orpc_agent_core::act::trace::{sanitize, validate_traceparent, validate_tracestate};
use orpc_agent_core::act::{
    DecodeOptions, MetaMap, MetaView, Position, Severity, ValidateOptions, decode,
};
use serde_json::Value;

fn load(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors/act")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn hex(s: &Value) -> Vec<u8> {
    hex::decode(s.as_str().unwrap()).unwrap()
}

#[test]
fn metadata_problems_per_position() {
    let doc = load("metadata.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 25);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let position = Position::parse(case["position"].as_str().unwrap()).unwrap();
        let map = MetaMap::decode(&hex(&case["cbor"])).unwrap_or_else(|e| panic!("{name}: {e}"));
        let strict = case["strict"].as_bool().unwrap();
        let got: BTreeSet<(String, String, String)> = map
            .validate(position, ValidateOptions { strict })
            .into_iter()
            .map(|p| {
                let sev = if p.severity == Severity::Error {
                    "error"
                } else {
                    "warning"
                };
                (p.key, p.code.as_str().to_owned(), sev.to_owned())
            })
            .collect();
        let want: BTreeSet<(String, String, String)> = case["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let f = |k: &str| p[k].as_str().unwrap().to_owned();
                (f("key"), f("code"), f("severity"))
            })
            .collect();
        assert_eq!(got, want, "{name}");
        // The borrowed-bytes path reports exactly the same problems.
        let bytes = hex(&case["cbor"]);
        let view: BTreeSet<(String, String, String)> = MetaView::parse(&bytes)
            .unwrap()
            .validate(position, ValidateOptions { strict })
            .into_iter()
            .map(|p| {
                let sev = if p.severity == Severity::Error {
                    "error"
                } else {
                    "warning"
                };
                (p.key, p.code.as_str().to_owned(), sev.to_owned())
            })
            .collect();
        assert_eq!(view, want, "{name} (MetaView)");
        // Foreign keys survive a decode/encode round trip byte for byte.
        assert_eq!(
            MetaMap::decode(&map.encode().unwrap()).unwrap(),
            map,
            "{name}"
        );
    }
}

#[test]
fn hostile_metadata_gets_typed_errors() {
    let doc = load("decode.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let e = MetaMap::decode(&hex(&case["cbor"])).expect_err(name);
        assert_eq!(e.code(), case["error"].as_str().unwrap(), "{name}: {e}");
        let e = MetaView::parse(&hex(&case["cbor"])).expect_err(name);
        assert_eq!(
            e.code(),
            case["error"].as_str().unwrap(),
            "{name} (MetaView): {e}"
        );
    }
}

#[test]
fn no_allocation_from_absent_lengths() {
    // Declared lengths of 2^64-1 items/bytes in a handful of bytes: each
    // must fail before anything is sized by the declaration.
    for h in [
        "9bffffffffffffffff",
        "bbffffffffffffffff",
        "5bffffffffffffffff",
        "7bffffffffffffffff",
    ] {
        let e = decode(&hex::decode(h).unwrap(), DecodeOptions::LENIENT).unwrap_err();
        assert_eq!(e.code(), "LENGTH_BEYOND_INPUT", "{h}");
    }
    // Deep nesting fails at the limit without exhausting the stack.
    let deep = vec![0x81u8; 100_000];
    assert_eq!(
        decode(&deep, DecodeOptions::LENIENT).unwrap_err().code(),
        "TOO_DEEP"
    );
    let deep_maps: Vec<u8> = std::iter::repeat_n([0xa1u8, 0x60], 100_000)
        .flatten()
        .collect();
    assert_eq!(MetaMap::decode(&deep_maps).unwrap_err().code(), "TOO_DEEP");
}

#[test]
fn every_truncation_of_a_valid_map_is_an_error_not_a_panic() {
    let doc = load("metadata.json");
    let full = hex(&doc["cases"][0]["cbor"]);
    for cut in 0..full.len() {
        assert!(
            MetaMap::decode(&full[..cut]).is_err(),
            "prefix of {cut} bytes decoded"
        );
    }
    assert!(MetaMap::decode(&full).is_ok());
}

/// The valid traceparent the `tracestate` cases' `kept` is read beside.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[test]
fn trace_context_vectors() {
    let doc = load("trace.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 40);
    for case in cases {
        let value = case["value"].as_str().unwrap();
        let got = match case["header"].as_str().unwrap() {
            "traceparent" => validate_traceparent(value),
            "tracestate" => validate_tracestate(value),
            other => panic!("unknown header {other}"),
        };
        let got = got.err().map(|e| e.code().to_owned());
        assert_eq!(got.as_deref(), case["error"].as_str(), "{value:?}");
        if case["header"] == "tracestate" {
            // What a receiver keeps beside a valid traceparent (every
            // tracestate case says; null: dropped).
            let kept = case
                .get("kept")
                .unwrap_or_else(|| panic!("{value:?}: no `kept`"));
            let tc = sanitize(Some(TRACEPARENT), Some(value)).unwrap().unwrap();
            assert_eq!(tc.tracestate.as_deref(), kept.as_str(), "kept of {value:?}");
        }
    }
}

#[test]
fn localized_vectors() {
    let doc = load("localized.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let v = decode(&hex(&case["cbor"]), DecodeOptions::default()).unwrap();
        if let Some(code) = case.get("error") {
            assert_eq!(
                Localized::from_cbor(&v).unwrap_err().code(),
                code.as_str().unwrap(),
                "{name}"
            );
            continue;
        }
        let l = Localized::from_cbor(&v).unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = l.resolve(
            case["requested"].as_str(),
            case["default_language"].as_str(),
        );
        assert_eq!(r.text, case["text"].as_str().unwrap(), "{name}");
        assert_eq!(r.language, case["language"].as_str(), "{name}");
    }
}

#[test]
fn grant_decisions() {
    use orpc_agent_core::ffi::act::grant_decide;
    let doc = load("grants.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let got = grant_decide(&case["declared"], &case["grants"], &case["request"]);
        match case.get("error") {
            Some(code) => {
                let e = got.expect_err(name);
                assert_eq!(e.code.as_str(), "INVALID_INPUT", "{name}");
                assert_eq!(e.details.unwrap()["reason"], *code, "{name}");
            }
            None => {
                let got = got.unwrap_or_else(|e| panic!("{name}: {e:?}"));
                assert_eq!(got["allowed"], case["allowed"], "{name}");
                assert_eq!(got.get("reason"), case.get("reason"), "{name}");
                assert_eq!(
                    got["allowed"] == false,
                    got["message"].is_string(),
                    "{name}"
                );
            }
        }
    }
}

#[test]
fn tool_definition_metadata_from_agent_meta() {
    use orpc_agent_core::act::MetaMap;
    use orpc_agent_core::ffi::act::{meta_encode, tool_definition_meta};
    let doc = load("tool_meta.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 6);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let got = tool_definition_meta(case["id"].as_str().unwrap(), &case["meta"]);
        match case.get("problems") {
            Some(want) => {
                let e = got.expect_err(name);
                assert_eq!(e.code.as_str(), "INVALID_INPUT", "{name}");
                let details = e.details.unwrap();
                assert_eq!(details["reason"], "INVALID_AGENT_META", "{name}");
                let got: BTreeSet<(String, String)> = details["problems"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        (
                            p["path"].as_str().unwrap().to_owned(),
                            p["code"].as_str().unwrap().to_owned(),
                        )
                    })
                    .collect();
                let want: BTreeSet<(String, String)> = want
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        (
                            p["path"].as_str().unwrap().to_owned(),
                            p["code"].as_str().unwrap().to_owned(),
                        )
                    })
                    .collect();
                assert_eq!(got, want, "{name}");
            }
            None => {
                let view = got.unwrap_or_else(|e| panic!("{name}: {e:?}"));
                assert_eq!(view, case["view"], "{name}");
                // A valid tool-definition map, as the core writes it.
                let map = MetaMap::decode(&meta_encode(&view).unwrap()).unwrap();
                let problems =
                    map.validate(Position::ToolDefinition, ValidateOptions { strict: true });
                assert!(problems.is_empty(), "{name}: {problems:?}");
            }
        }
    }
}

#[test]
fn descriptors_as_cbor() {
    use orpc_agent_core::ffi::act::descriptors_cbor;
    use orpc_agent_core::registry::{CapabilityDecl, CapabilityRegistry};
    let doc = load("descriptors.json");
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 3);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let decls = case["capabilities"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(id, meta)| CapabilityDecl::new(id.clone(), meta.clone()))
            .collect();
        let registry =
            CapabilityRegistry::build_with_json_options(decls, &serde_json::json!({})).unwrap();
        let got =
            hex::encode(descriptors_cbor(&registry, case["surface"].as_str().unwrap()).unwrap());
        if std::env::var_os("DESCRIPTOR_VECTORS_PRINT").is_some() {
            println!("{name}: {got}");
            continue;
        }
        assert_eq!(got, case["cbor"].as_str().unwrap(), "{name}");
    }
}
