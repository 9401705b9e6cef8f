#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! tests/vectors/hash/*.json: the Rust encoder against bytes and hashes
//! computed by cbor2 (tests/cross/gen_hash_vectors.py).

use std::path::PathBuf;

use orpc_agent_core::act::{
    DecodeOptions, decode, deterministic::MAX_HASH_DEPTH, hash_cbor_input, hash_preimage,
    hash_preimage_cbor, input_hash,
};
use orpc_agent_core::{CapabilityError, ErrorCode};
use serde_json::Value;

fn vector_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/hash");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("hash vectors missing at {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no hash vectors in {}", dir.display());
    files
}

fn hex(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

#[test]
fn every_hash_vector_matches() {
    let mut checked = 0;
    for file in vector_files() {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for case in doc["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let cap = case["capability"].as_str().unwrap();
            let result = if let Some(h) = case.get("input_cbor") {
                // Nesting cases go one level past the hash limit, so the
                // decoder's own limit must not stop them first.
                let opts = DecodeOptions {
                    max_depth: MAX_HASH_DEPTH + 1,
                    allow_indefinite: false,
                };
                let v = decode(&hex(h.as_str().unwrap()), opts)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                hash_preimage_cbor(cap, &v).map(|b| (b, hash_cbor_input(cap, &v).unwrap()))
            } else {
                let input = &case["input"];
                hash_preimage(cap, input).map(|b| (b, input_hash(cap, input).unwrap()))
            };
            match (result, case.get("error")) {
                (Ok((bytes, hash)), None) => {
                    assert_eq!(
                        hex::encode(bytes),
                        case["cbor"].as_str().unwrap(),
                        "{name}: bytes"
                    );
                    assert_eq!(hash, case["sha256"].as_str().unwrap(), "{name}: hash");
                }
                (Err(e), Some(code)) => {
                    assert_eq!(e.code(), code.as_str().unwrap(), "{name}");
                    if let Some(message) = case.get("message") {
                        assert_eq!(e.to_string(), message.as_str().unwrap(), "{name}: message");
                    }
                    let ce: CapabilityError = e.into();
                    assert_eq!(
                        ce.code.as_str(),
                        case["error_code"].as_str().unwrap(),
                        "{name}"
                    );
                    assert_eq!(ce.code, ErrorCode::InvalidInput);
                }
                (Ok(_), Some(code)) => panic!("{name}: expected {code}, hashed fine"),
                (Err(e), None) => panic!("{name}: unexpected {e}"),
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} hash vectors");
}

#[test]
fn hash_is_lowercase_hex_sha256() {
    let h = input_hash("orders.search", &serde_json::json!({"q": "x"})).unwrap();
    assert_eq!(h.len(), 64);
    assert!(
        h.chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
    );
    // A different capability or input gives a different hash.
    assert_ne!(
        h,
        input_hash("orders.list", &serde_json::json!({"q": "x"})).unwrap()
    );
    assert_ne!(
        h,
        input_hash("orders.search", &serde_json::json!({"q": "y"})).unwrap()
    );
}
