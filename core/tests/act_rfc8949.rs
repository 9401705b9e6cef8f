#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The RFC 8949 Appendix A corpus (tests/vectors/external/rfc8949-appendix-a.json,
//! a verbatim copy of the public cbor/test-vectors collection the project
//! was given, so a clean clone runs it) through the act codec.

use std::path::PathBuf;

use ciborium::Value as Cbor;
use orpc_agent_core::act::{DecodeOptions, decode, diagnostic, encode_deterministic};
use serde_json::Value as Json;

fn corpus() -> Vec<Json> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors/external/rfc8949-appendix-a.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("RFC 8949 corpus missing at {} ({e})", path.display()));
    let items: Vec<Json> = serde_json::from_str(&text).unwrap();
    assert!(items.len() >= 80, "corpus truncated: {} items", items.len());
    items
}

/// The one corpus item RFC 8949 itself declares not well-formed: 0xf818
/// (simple value 24 in two bytes) was in RFC 7049's appendix; RFC 8949 §3.3
/// says a two-byte simple value below 32 is not well-formed and dropped it.
const NOT_WELL_FORMED_IN_RFC8949: &str = "f818";

/// The decoded JSON of a value, or `None` where JSON has no equivalent.
fn to_json(v: &Cbor) -> Option<Json> {
    Some(match v {
        Cbor::Null => Json::Null,
        Cbor::Bool(b) => Json::Bool(*b),
        Cbor::Integer(i) => {
            let i = i128::from(*i);
            if let Ok(u) = u64::try_from(i) {
                u.into()
            } else if let Ok(s) = i64::try_from(i) {
                s.into()
            } else {
                serde_json::Number::from_f64(i as f64)?.into()
            }
        }
        Cbor::Float(f) => serde_json::Number::from_f64(*f)?.into(),
        Cbor::Text(s) => Json::String(s.clone()),
        Cbor::Array(a) => Json::Array(a.iter().map(to_json).collect::<Option<_>>()?),
        Cbor::Map(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                out.insert(k.as_text()?.to_owned(), to_json(v)?);
            }
            Json::Object(out)
        }
        // Bignums: compare by magnitude as a float, as the corpus does.
        Cbor::Tag(t @ (2 | 3), inner) => {
            let mag = inner
                .as_bytes()?
                .iter()
                .fold(0f64, |a, b| a * 256.0 + f64::from(*b));
            let n = if *t == 2 { mag } else { -1.0 - mag };
            serde_json::Number::from_f64(n)?.into()
        }
        _ => return None,
    })
}

fn same_json(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn every_item_decodes_and_matches() {
    let mut decoded_values = 0;
    let mut diagnostics = 0;
    for item in corpus() {
        let hex_str = item["hex"].as_str().unwrap();
        let bytes = hex::decode(hex_str).unwrap();
        if hex_str == NOT_WELL_FORMED_IN_RFC8949 {
            let e = diagnostic(&bytes).unwrap_err();
            assert_eq!(e.code(), "MALFORMED", "{hex_str}");
            assert_eq!(
                decode(&bytes, DecodeOptions::LENIENT).unwrap_err().code(),
                "MALFORMED"
            );
            continue;
        }
        // Every item is well-formed: diagnostic notation covers all of them.
        let diag = diagnostic(&bytes).unwrap_or_else(|e| panic!("{hex_str}: {e}"));
        if let Some(expected) = item.get("diagnostic") {
            assert_eq!(diag, expected.as_str().unwrap(), "{hex_str}");
            diagnostics += 1;
        }
        // Everything ciborium::Value can hold decodes to a value.
        match decode(&bytes, DecodeOptions::LENIENT) {
            Ok(v) => {
                if let Some(expected) = item.get("decoded") {
                    let got =
                        to_json(&v).unwrap_or_else(|| panic!("{hex_str}: no JSON form for {v:?}"));
                    assert!(same_json(&got, expected), "{hex_str}: {got} != {expected}");
                    decoded_values += 1;
                }
                // Deterministic output decodes (strictly) and is a fixed
                // point: re-encoding it gives the same bytes.
                let det = encode_deterministic(&v).unwrap();
                let again = decode(&det, DecodeOptions::default()).unwrap();
                assert_eq!(encode_deterministic(&again).unwrap(), det, "{hex_str}");
                if diag != "NaN" && !matches!(v, Cbor::Map(_)) {
                    assert_eq!(again, v, "{hex_str}");
                }
                let definite = !diag.contains("_ ");
                if item["roundtrip"] == Json::Bool(true) && definite {
                    // Appendix A's definite items are in preferred (here:
                    // deterministic) form, so they re-encode to themselves.
                    assert_eq!(hex::encode(&det), hex_str, "roundtrip {diag}");
                }
            }
            Err(e) => {
                // Only undefined and simple values have no ciborium form.
                assert_eq!(e.code(), "UNSUPPORTED_SIMPLE", "{hex_str}: {e}");
                assert!(
                    diag == "undefined" || diag.starts_with("simple("),
                    "{hex_str}"
                );
            }
        }
    }
    assert!(decoded_values >= 50, "{decoded_values}");
    assert!(diagnostics >= 20, "{diagnostics}");
}

#[test]
fn indefinite_items_are_rejected_where_definite_is_required() {
    for item in corpus() {
        let hex_str = item["hex"].as_str().unwrap();
        let bytes = hex::decode(hex_str).unwrap();
        let Ok(diag) = diagnostic(&bytes) else {
            continue;
        };
        if diag.contains("_ ") {
            let e = decode(&bytes, DecodeOptions::default()).unwrap_err();
            assert_eq!(e.code(), "INDEFINITE_LENGTH", "{hex_str}");
        }
    }
}

#[test]
fn deterministic_output_for_json_representable_items() {
    // §4.2.1: the deterministic encoding of each JSON-representable value
    // (decoded from any of its encodings, definite or not) is one byte string.
    let expect = [
        ("bf61610161629f0203ffff", "a26161016162820203"),
        ("9f018202039f0405ffff", "8301820203820405"),
        ("7f657374726561646d696e67ff", "6973747265616d696e67"),
        ("bf6346756ef563416d7421ff", "a263416d74216346756ef5"),
        ("f93c00", "f93c00"),
        ("fb3ff199999999999a", "fb3ff199999999999a"),
        ("fa47c35000", "fa47c35000"),
    ];
    for (input, want) in expect {
        let v = decode(&hex::decode(input).unwrap(), DecodeOptions::LENIENT).unwrap();
        assert_eq!(
            hex::encode(encode_deterministic(&v).unwrap()),
            want,
            "{input}"
        );
    }
    // A non-shortest encoding is normalised: 1.0 as a double → half.
    let v = decode(
        &hex::decode("fb3ff0000000000000").unwrap(),
        DecodeOptions::default(),
    )
    .unwrap();
    assert_eq!(hex::encode(encode_deterministic(&v).unwrap()), "f93c00");
    // Non-shortest integer heads are normalised too.
    let v = decode(
        &hex::decode("1b0000000000000001").unwrap(),
        DecodeOptions::default(),
    )
    .unwrap();
    assert_eq!(hex::encode(encode_deterministic(&v).unwrap()), "01");
}
