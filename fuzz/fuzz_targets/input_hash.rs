//! The approval input hash (DESIGN §5): any JSON input hashes without
//! panicking, the hash is stable (same input, same hash), a re-parse of the
//! same JSON text gives the same hash, and hashing the input through its
//! CBOR form (`hash_cbor_input`) agrees with hashing the JSON value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orpc_agent_core::act::{DecodeOptions, decode, hash_cbor_input, hash_preimage, input_hash};

fuzz_target!(|data: &[u8]| {
    // First line: the capability id; the rest: the JSON input.
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(0);
    let (id, json) = data.split_at(split);
    let Ok(id) = std::str::from_utf8(id) else {
        return;
    };
    let Ok(input) = serde_json::from_slice::<serde_json::Value>(json) else {
        return;
    };
    let first = input_hash(id, &input);
    let second = input_hash(id, &input);
    assert_eq!(first, second, "the hash is not stable");
    let Ok(hash) = first else { return };
    assert_eq!(hash.len(), 64);
    assert!(
        hash.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    );
    let text = serde_json::to_string(&input).expect("a parsed value serializes");
    let reparsed: serde_json::Value = serde_json::from_str(&text).expect("re-parses");
    assert_eq!(
        input_hash(id, &reparsed).ok(),
        Some(hash.clone()),
        "hash changed on re-parse"
    );
    let preimage = hash_preimage(id, &input).expect("preimage of a hashable input");
    let envelope = decode(&preimage, DecodeOptions::default()).expect("preimage is strict CBOR");
    let ciborium::Value::Map(entries) = envelope else {
        panic!("preimage is not a map")
    };
    let cbor_input = entries
        .iter()
        .find(|(k, _)| k.as_text() == Some("input"))
        .map(|(_, v)| v.clone())
        .expect("preimage has `input`");
    assert_eq!(
        hash_cbor_input(id, &cbor_input).ok(),
        Some(hash),
        "CBOR and JSON paths disagree"
    );
});
